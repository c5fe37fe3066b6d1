package sqlseq_test

// must returns v, and panics on err: for the constructors of a test's
// fixtures, whose errors are the test's bug.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

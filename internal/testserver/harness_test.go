package testserver

import (
	"slices"
	"testing"
)

// Chain runs the tests inside every Run, the first outermost, and returns
// the tests' code.
func TestChain(t *testing.T) {
	var trace []string
	run := func(name string) func(func() int) int {
		return func(tests func() int) int {
			trace = append(trace, name+" in")
			code := tests()
			trace = append(trace, name+" out")
			return code
		}
	}
	code := Chain(func() int { trace = append(trace, "tests"); return 3 }, run("a"), run("b"))
	want := []string{"a in", "b in", "tests", "b out", "a out"}
	if code != 3 || !slices.Equal(trace, want) {
		t.Errorf("Chain = %d, ran %q; want 3, %q", code, trace, want)
	}
	if code := Chain(func() int { return 5 }); code != 5 {
		t.Errorf("Chain with no Run = %d, want 5", code)
	}
}

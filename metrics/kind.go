package metrics

import "github.com/sngen/sn/wire"

// Kind names the kind of err, as the label kind of sn_errors_total: the
// code sn serve answers the error with (wire.Classify), so that a metric
// and a response name an error alike: "unavailable", "var_missing"...
// and "internal" for an error that wraps none of sn's sentinels (a panic,
// a bug).
func Kind(err error) string {
	code, _ := wire.Classify(err)
	return string(code)
}

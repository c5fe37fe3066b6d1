package metrics

import (
	"context"
	"errors"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

// kinds name the sentinels, the specific before the general. The names
// are the codes of sn serve's errors (server.Code), so that a metric and
// a response name an error alike; a test keeps them in step.
var kinds = []struct {
	err  error
	kind string
}{
	{sn.ErrAmbiguous, "ambiguous"},
	{sn.ErrVarMissing, "var_missing"},
	{sn.ErrVarInvalid, "var_invalid"},
	{sn.ErrInstant, "instant_invalid"},
	{sn.ErrTooMany, "too_many"},
	{sn.ErrInvalidNumber, "invalid_number"},
	{sn.ErrOverflow, "overflow"},
	{sequence.ErrExhausted, "exhausted"},
	{sequence.ErrClockRollback, "clock_rollback"},
	{sequence.ErrLeaseLost, "lease_lost"},
	{sequence.ErrRegressed, "regressed"},
	{sequence.ErrClosed, "closed"},
	{sequence.ErrUnavailable, "unavailable"},
	{context.Canceled, "cancelled"},
	{context.DeadlineExceeded, "cancelled"},
}

// Kind names the kind of err, as the label kind of sn_errors_total:
// "unavailable", "var_missing"... and "internal" for an error that wraps
// none of sn's sentinels (a panic, a bug).
func Kind(err error) string {
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k.kind
		}
	}
	return "internal"
}

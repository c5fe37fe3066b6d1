package server

import (
	"fmt"
	"math"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
)

// A RetryAfter within a second of math.MaxInt64 overflows the rounding up
// in Server.error: the header is negative.
func TestAdversaryRetryAfterOverflow(t *testing.T) {
	for _, d := range []time.Duration{math.MaxInt64, math.MaxInt64 - 854775807} {
		rec := httptest.NewRecorder()
		err := sequence.RetryAfter(fmt.Errorf("%w: far behind", sequence.ErrClockRollback), d)
		(&Server{}).error(rec, err)
		h := rec.Header().Get("Retry-After")
		n, perr := strconv.ParseInt(h, 10, 64)
		if perr != nil || n < 1 {
			t.Errorf("RetryAfter %d ns: Retry-After: %q (want a positive number of seconds)", int64(d), h)
		}
	}
}

package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/sequence"
)

// DefaultRetention is how long the counter of a period of an hour or
// shorter stays in the store after its period: two hours, which covers the
// hour a zone repeats when its clocks go back.
const DefaultRetention = 2 * time.Hour

// MinRetention is the least retention: the repeated hour of a zone's
// autumn must find its counter still there.
const MinRetention = time.Hour

// A guard keeps a sequence part with a fine reset (hour, minute, second)
// from drawing from a counter the store has deleted.
//
// The counters of such periods expire in the store (sequence.Expirer), so
// they do not pile up: each is kept for its period and the retention R
// after its first draw. A draw at an instant whose counter may be gone
// would start it again at 1 and repeat the numbers of that period. So the
// latest instant numbers were issued at is kept as a mark in the store
// (sequence.Marker), shared by every process, and a draw at an instant
// more than R/2 before the mark is refused with sequence.ErrClockRollback:
// a clock set back, a process whose clock is behind the others', a
// document instant given too far in the past. Within R/2 the counter is
// certainly there and continues.
//
// The mark is read and raised once per period per process, and again when
// R/4 has passed on the process's monotonic clock without a new period (a
// wall clock that stopped). What is pushed is the later of the instant and
// the last mark read plus the monotonic time since, so a clock set back
// while the process runs is caught on its own.
type guard struct {
	marker    sequence.Marker
	expirer   sequence.Expirer // nil: the store keeps every counter
	key       string           // the mark's key
	period    time.Duration
	retention time.Duration

	fast atomic.Pointer[guardState] // what was checked last, for the hot path

	mu      sync.Mutex
	off     bool            // the store keeps no marks: its counters never expire either
	mark    int64           // the mark last read, in Unix microseconds
	readAt  time.Time       // when, on the monotonic clock
	bucket  int64           // the period checked last
	expired map[string]bool // the keys of that period given an expiry
}

// guardState is a period and a key that passed the guard, until a
// deadline on the monotonic clock.
type guardState struct {
	bucket int64
	key    string
	until  time.Time
}

// newGuard returns the guard of part s drawing from gen, or nil when s has
// no fine reset or gen keeps no marks.
func newGuard(s *Part, gen sequence.Gen, base string, retention time.Duration) *guard {
	var period time.Duration
	switch s.Reset {
	case expression.Hour:
		period = time.Hour
	case expression.Minute:
		period = time.Minute
	case expression.Second:
		period = time.Second
	default:
		return nil
	}
	m, ok := gen.(sequence.Marker)
	if !ok {
		return nil
	}
	g := &guard{marker: m, key: escapeKey(base) + "|guard", period: period, retention: retention}
	g.expirer, _ = gen.(sequence.Expirer)
	return g
}

// check lets a draw at instant at, in period b, from counter key go
// ahead, or refuses it.
func (g *guard) check(ctx context.Context, b int64, at time.Time, key string) error {
	if st := g.fast.Load(); st != nil && st.bucket == b && st.key == key && time.Now().Before(st.until) {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.off {
		return nil
	}
	now := time.Now()
	if b != g.bucket || now.Sub(g.readAt) >= g.retention/4 {
		push := max(at.UnixMicro(), 0)
		if !g.readAt.IsZero() {
			push = max(push, g.mark+now.Sub(g.readAt).Microseconds())
		}
		m, err := g.marker.Mark(ctx, g.key, push)
		if errors.Is(err, errors.ErrUnsupported) {
			g.off = true // no marks: Expire is never called, counters stay
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: reading the clock guard's mark: %w", sequence.ErrUnavailable, err)
		}
		g.mark, g.readAt = m, now
		if b != g.bucket {
			g.bucket, g.expired = b, map[string]bool{}
		}
	}
	if lag := time.Duration(g.mark-at.UnixMicro()) * time.Microsecond; lag > g.retention/2 {
		g.bucket = 0 // check again next time
		return fmt.Errorf("%w: the instant %s is %v before the latest instant numbers were issued at (%s); counters of periods more than %v old may be gone from the store, so nothing is drawn for it",
			sequence.ErrClockRollback, at.Format(time.RFC3339Nano), lag.Round(time.Millisecond), time.UnixMicro(g.mark).UTC().Format(time.RFC3339Nano), g.retention/2)
	}
	if g.expirer == nil || g.expired[key] {
		g.fast.Store(&guardState{bucket: b, key: key, until: g.readAt.Add(g.retention / 4)})
	}
	return nil
}

// drawn gives counter key, just drawn from, its expiry in the store, once
// per period: its period and the retention from now. It is done after the
// first draw, when the key is in the store. A failure leaves the key
// without an expiry (it stays in the store) and is tried again on the
// next draw.
func (g *guard) drawn(ctx context.Context, b int64, key string) {
	if g.expirer == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.off || b != g.bucket || g.expired[key] {
		return
	}
	if err := g.expirer.Expire(ctx, key, g.period+g.retention); err != nil {
		return
	}
	g.expired[key] = true
	g.fast.Store(&guardState{bucket: b, key: key, until: g.readAt.Add(g.retention / 4)})
}

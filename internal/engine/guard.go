package engine

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sngen/sn/internal/builtin"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/record"
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
// they do not pile up, and they expire by the store's clock (the clock of
// its records, record.Store.Now): a database's now(), Redis's TIME. So the guard reads
// that clock, not the caller's and not the instants numbers were issued
// at. A counter is given, when it is first drawn from, an expiry that
// ends the retention R after its period ends by the store's clock
// (however far in the future a document's instant puts that period), and
// a draw at an instant more than R/2 before the store's time is refused:
// its counter may be gone, and starting it again would repeat its
// numbers. Within R/2 the counter is certainly there and continues. This
// holds after an idle spell of any length, in a process restarted with a
// clock behind the store's, and for a document instant given too far in
// the past; a caller's instant never moves anything.
//
// The store's time is read when a call first draws in a period later than
// any before (at most once a period), and every R/4 on the process's
// monotonic clock, and carried forward on that clock between readings.
// Each reading is also raised into a mark in the store's records (see
// mark), shared by every process, and the latest mark counts as the
// store's time: a store whose clock went back (a failover to a server
// whose clock is behind) does not let a call into a period whose counter
// was deleted by the clock before. A store clock that steps forward by more
// than the retention and two periods deletes the counters of the current
// period early; a process whose reading is younger than R/4 draws from
// them again until its next reading (see sn.WithRetention): the guard
// cannot see such a step between its readings.
type guard struct {
	gen       sequence.Gen     // for the mark an earlier release kept in a counter
	records   record.Store     // the store's clock and the mark
	expirer   sequence.Expirer // nil: the store keeps every counter
	key       string           // the mark's key
	period    time.Duration
	retention time.Duration

	fast atomic.Pointer[guardState] // the key checked last, for the hot path

	mu      sync.Mutex
	off     bool            // the store has no clock: its counters never expire either
	latest  int64           // the latest period drawn in
	st      guardState      // the last reading
	expired map[string]bool // the keys given an expiry since that reading
}

// guardState is a reading of the store's time, and a key that passed the
// guard with it.
type guardState struct {
	key    string
	clock  time.Time // the store's clock when read
	mark   time.Time // the latest reading any process marked, at least clock
	readAt time.Time // when, on the monotonic clock
}

// newGuard returns the guard of part s drawing from gen, or nil when s has
// no fine reset or gen has no clock.
func newGuard(s *Part, gen sequence.Gen, base string, retention time.Duration) *guard {
	var period time.Duration
	switch s.Reset {
	case builtin.Hour:
		period = time.Hour
	case builtin.Minute:
		period = time.Minute
	case builtin.Second:
		period = time.Second
	default:
		return nil
	}
	rs := record.Of(gen)
	if rs == nil {
		return nil
	}
	g := &guard{gen: gen, records: rs, key: escapeKey(base) + "|clock", period: period, retention: retention}
	g.expirer, _ = gen.(sequence.Expirer)
	return g
}

// lateError is a draw refused by a guard: its instant is too far before
// the store's time. It wraps sequence.ErrClockRollback, or ErrInstant when
// the caller gave the instant.
type lateError struct {
	at, store time.Time
	limit     time.Duration
	given     bool
}

func (e *lateError) Error() string {
	whose := "the clock's instant"
	if e.given {
		whose = "the instant given"
	}
	return fmt.Sprintf("%v: %s %s is %v before the store's time (%s); counters of periods more than %v old may be gone from the store, so nothing is drawn for it",
		e.Unwrap(), whose, e.at.Format(time.RFC3339Nano), e.store.Sub(e.at).Round(time.Millisecond), e.store.UTC().Format(time.RFC3339Nano), e.limit)
}

// RetryAfter returns how long the clock's instants will be refused: until
// the clock is within the limit of the store's time again. An instant
// given is refused for good.
func (e *lateError) RetryAfter() time.Duration {
	if e.given {
		return 0
	}
	return e.store.Sub(e.at) - e.limit
}

func (e *lateError) Unwrap() error {
	if e.given {
		return ErrInstant
	}
	return sequence.ErrClockRollback
}

// check lets a draw at instant at (given by the caller, or read from the
// clock), in period b, from counter key go ahead, or refuses it.
func (g *guard) check(ctx context.Context, b int64, at time.Time, given bool, key string) error {
	now := time.Now()
	if st := g.fast.Load(); st != nil && st.key == key && now.Sub(st.readAt) < g.retention/4 {
		return g.late(st, now, at, given)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.off {
		return nil
	}
	if b > g.latest || now.Sub(g.st.readAt) >= g.retention/4 {
		if err := g.read(ctx); err != nil {
			return err
		}
		g.latest = max(g.latest, b)
		now = time.Now()
	}
	if err := g.late(&g.st, now, at, given); err != nil {
		return err
	}
	if g.expirer == nil || g.expired[key] {
		st := g.st
		st.key = key
		g.fast.Store(&st)
	}
	return nil
}

// read reads the store's clock and raises the mark; g.mu is held.
func (g *guard) read(ctx context.Context) error {
	t, err := g.records.Now(ctx)
	if errors.Is(err, errors.ErrUnsupported) {
		g.off = true // no clock: Expire is never called, counters stay
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: reading the store's clock: %w", sequence.ErrUnavailable, err)
	}
	readAt := time.Now()
	// What this process saw before, carried forward, goes in too: a store
	// whose clock went back since is caught on its own.
	push := t.UnixMicro()
	if !g.st.readAt.IsZero() {
		push = max(push, g.st.mark.Add(readAt.Sub(g.st.readAt)).UnixMicro())
	}
	m, err := g.mark(ctx, max(push, 0))
	if err != nil {
		return fmt.Errorf("%w: marking the store's clock: %w", sequence.ErrUnavailable, err)
	}
	mark := t
	if m > mark.UnixMicro() {
		mark = time.UnixMicro(m)
	}
	g.st = guardState{clock: t, mark: mark, readAt: readAt}
	g.expired = map[string]bool{}
	return nil
}

// mark raises the mark, the latest reading of the store's clock any
// process made (in microseconds), to at least v, and returns it. It is
// kept in the store's records under "mk/" and the mark's key.
//
// An earlier release kept it as the last number of the counter of that
// key: where the record is missing, that counter is drawn from once, and
// the number before the one drawn is the mark it kept.
func (g *guard) mark(ctx context.Context, v int64) (int64, error) {
	rkey := "mk/" + g.key
	if len(rkey) > record.MaxKey {
		rkey = fmt.Sprintf("mk/#%x", sha256.Sum256([]byte(g.key)))
	}
	got, err := g.records.Get(ctx, rkey)
	if err != nil {
		return 0, err
	}
	var earlier int64
	if !got[0].Exists() {
		n, err := g.gen.Next(ctx, g.key)
		if err != nil {
			return 0, fmt.Errorf("reading the mark of an earlier release: %w", err)
		}
		earlier = n - 1
	}
	err = record.Update(ctx, g.records, func(tx *record.Tx) error {
		r, err := tx.Get1(rkey)
		if err != nil {
			return err
		}
		cur := earlier
		if r.Exists() {
			if cur, err = strconv.ParseInt(string(r.Value), 10, 64); err != nil {
				return fmt.Errorf("the mark %q is %.40q, not a number: %w", rkey, r.Value, record.ErrInvalid)
			}
		}
		if v = max(v, cur); v > cur || !r.Exists() {
			tx.Put(rkey, strconv.AppendInt(nil, v, 10))
		}
		return nil
	})
	return v, err
}

// late refuses an instant more than half the retention before the store's
// time, as reading st carries it forward to now.
func (g *guard) late(st *guardState, now, at time.Time, given bool) error {
	store := st.mark.Add(now.Sub(st.readAt))
	if store.Sub(at) > g.retention/2 {
		return &lateError{at: at, store: store, limit: g.retention / 2, given: given}
	}
	return nil
}

// drawn gives counter key, just drawn from at instant at, its expiry in
// the store: the retention after its period ends, by the store's clock,
// and a period's length more for the hour a zone repeats. It is done after
// the first draw (when the key is in the store) and again after each
// reading of the clock. A failure leaves the key without an expiry (it
// stays in the store) and is tried again on the next draw.
func (g *guard) drawn(ctx context.Context, at time.Time, key string) {
	if g.expirer == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.off || g.expired == nil || g.expired[key] {
		return
	}
	clock := g.st.clock.Add(time.Since(g.st.readAt))
	// Sub saturates at the longest Duration; the sum must too, or an
	// instant far ahead (the year 2400) would give a negative ttl, which
	// deletes the key at once.
	ttl := max(at.Sub(clock), 0)
	for _, d := range []time.Duration{2 * g.period, g.retention} {
		ttl = min(ttl, math.MaxInt64-d) + d
	}
	if err := g.expirer.Expire(ctx, key, ttl); err != nil {
		return
	}
	g.expired[key] = true
	st := g.st
	st.key = key
	g.fast.Store(&st)
}

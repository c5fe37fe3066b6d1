// Package guardtest checks sn's guard of counters that expire (the
// engine's retention guard) over a store, for the stores' tests. It sits
// above the engine it drives, so that sequencetest stays below it.
package guardtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/builtin"
	"github.com/sngen/sn/internal/engine"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/record"
)

// Store is a store whose counters expire by its own clock, the clock of
// its records: what the retention guard reads.
type Store interface {
	sequence.Allocator
	sequence.Expirer
	record.Holder
}

// NewStore returns a fresh store for one test of the guard.
type NewStore func(t *testing.T) Store

// Run checks, over a store, sn's guard of counters that expire
// (reset=second, a retention of four seconds): a process started after a
// counter expired, or whose clock went back into its period, is refused
// rather than numbering the period again; a post-dated period outlives an
// idle spell. Each test runs beside a control, without the guard, that
// repeats. The tests sleep through the retention, in parallel, and so
// newStore must be safe to call from many goroutines.
func Run(t *testing.T, newStore NewStore) {
	t.Run("Idle", func(t *testing.T) { t.Parallel(); guardIdle(t, newStore) })
	t.Run("PostDated", func(t *testing.T) { t.Parallel(); guardPostDated(t, newStore) })
}

// noClock hides a Segment's records and Expirer: sn then neither
// guards nor expires its counters. The controls of the guard's tests
// expire them themselves, as the guard and the store would.
type noClock struct{ s *sequence.Segment }

func (n noClock) Next(ctx context.Context, key string) (int64, error) { return n.s.Next(ctx, key) }

// guardRetention is the retention of the guard's tests: four seconds, so
// that counters per second expire within a test.
const guardRetention = 4 * time.Second

// guardProcess returns a "process": a plan of tpl over a new Segment of
// store, guarded or not, reading clock.
func guardProcess(t *testing.T, store Store, tpl string, guarded bool, clock func() time.Time) *engine.Plan {
	t.Helper()
	seg, err := sequence.NewSegment(store, sequence.SegmentOptions{Step: 10, MinStep: 10, MaxStep: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { seg.Close() })
	var gen sequence.Gen = seg
	if !guarded {
		gen = noClock{seg}
	}
	pl, err := engine.Compile(tpl, engine.Config{
		Seqs:      map[string]sequence.Gen{"seq": gen},
		Exprs:     map[string]expression.Factory{"date": builtin.NewDate},
		Clock:     clock,
		Retention: guardRetention,
	})
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// Forget deletes key's journal from rs, its head and its records: a
// control of the guard plays a store that keeps no journal, and so starts
// a deleted counter again at 1. (A store that keeps one refuses it,
// journal.ErrBehind: a second defence, which the stores' RunExpirer
// checks.)
func Forget(t *testing.T, rs record.Store, key string) {
	t.Helper()
	err := record.Update(context.Background(), rs, func(tx *record.Tx) error {
		tx.DeleteRange(journal.Prefix(key), journal.Prefix(key)+"\xff")
		tx.Delete(journal.HeadKey(key))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// repeatCounter counts strings seen twice.
type repeatCounter struct {
	seen    map[string]bool
	repeats int
}

func (r *repeatCounter) add(s string) {
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if r.seen[s] {
		r.repeats++
	}
	r.seen[s] = true
}

// Counters per second expire by the store's clock, with a retention of
// four seconds here. Numbers are drawn in one second; then nothing is drawn
// for longer than two periods and the retention (an idle spell, every
// clock right), and another series's Expire sweeps the store. A process
// started then (a new Segment and plan) is refused a document instant in
// that second (ErrInstant), and a process whose clock is still in that
// second is refused too (ErrClockRollback): the guard reads the
// store's clock, not the instants numbers were issued at. The control,
// the same run whose counter expires without the guard, prints a number
// of that second twice.
func guardIdle(t *testing.T, newStore NewStore) {
	const tpl = `@<date, format=yyyyMMddHHmmss>-@<seq, width=4, reset=second>`
	for _, guarded := range []bool{true, false} {
		name := map[bool]string{true: "guarded", false: "control"}[guarded]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store := newStore(t)
			var count repeatCounter
			s0 := time.Now() // within half the retention of the store's clock, however loaded the machine
			a := guardProcess(t, store, tpl, guarded, time.Now)
			var key string
			for range 3 {
				n, err := a.Next(ctx, s0, nil)
				if err != nil {
					t.Fatal(err)
				}
				count.add(n)
				p, err := a.Parse(n)
				if err != nil {
					t.Fatal(err)
				}
				key = p.Key
			}
			if !guarded {
				// What the guard would give the counter.
				if err := store.Expire(ctx, key, 2*time.Second+guardRetention); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(2*time.Second + guardRetention + time.Second) // idle
			if err := store.Expire(ctx, "another series", time.Hour); err != nil {
				t.Fatal(err) // any series's Expire sweeps the store
			}
			if !guarded {
				Forget(t, store.Records(), key)
			}

			n, err := guardProcess(t, store, tpl, guarded, time.Now).Next(ctx, s0, nil)
			switch {
			case guarded && !errors.Is(err, engine.ErrInstant):
				t.Errorf("a document instant in a second whose counter expired: %q, %v; want ErrInstant", n, err)
			case err == nil:
				count.add(n)
			}
			if guarded {
				t.Log(err)
			}
			behind := guardProcess(t, store, tpl, guarded, func() time.Time { return s0 })
			n, err = behind.Next(ctx, time.Time{}, nil)
			switch {
			case guarded && !errors.Is(err, sequence.ErrClockRollback):
				t.Errorf("a process whose clock is in a second whose counter expired: %q, %v; want ErrClockRollback", n, err)
			case err == nil:
				count.add(n)
			}
			switch {
			case guarded && count.repeats != 0:
				t.Errorf("%d numbers repeated", count.repeats)
			case !guarded && count.repeats == 0:
				t.Errorf("the control repeated nothing: the test cannot see a counter that started again")
			}
		})
	}
}

// A post-dated document instant (an hour ahead) draws in its own second
// and moves nothing: calls at the present instant go on, and the
// post-dated second's counter outlives an idle spell longer than two
// periods and the retention, since its expiry counts from the end of its
// period, so a new process continues it. The control gives the counter
// the expiry of a period drawn at the present, and repeats.
func guardPostDated(t *testing.T, newStore NewStore) {
	const tpl = `P@<date, format=yyyyMMddHHmmss>-@<seq, width=4, reset=second>`
	for _, guarded := range []bool{true, false} {
		name := map[bool]string{true: "guarded", false: "control"}[guarded]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store := newStore(t)
			var count repeatCounter
			future := time.Now().Add(time.Hour).Truncate(time.Second)
			a := guardProcess(t, store, tpl, guarded, time.Now)
			n, err := a.Next(ctx, future, nil)
			if err != nil {
				t.Fatal(err)
			}
			count.add(n)
			p, err := a.Parse(n)
			if err != nil {
				t.Fatal(err)
			}
			if !guarded {
				if err := store.Expire(ctx, p.Key, 2*time.Second+guardRetention); err != nil {
					t.Fatal(err)
				}
			}
			for range 3 { // the present goes on
				n, err := a.Next(ctx, time.Time{}, nil)
				if err != nil {
					t.Fatalf("a call at the present after a post-dated one: %v", err)
				}
				count.add(n)
			}
			time.Sleep(2*time.Second + guardRetention + time.Second) // idle
			if err := store.Expire(ctx, "another series", time.Hour); err != nil {
				t.Fatal(err)
			}
			if !guarded {
				Forget(t, store.Records(), p.Key)
			}
			d := guardProcess(t, store, tpl, guarded, time.Now)
			n, err = d.Next(ctx, future, nil)
			if err != nil {
				t.Fatal(err)
			}
			count.add(n)
			if p, err := d.Parse(n); guarded && (err != nil || p.Seq <= 10) {
				t.Errorf("the post-dated second's counter after the idle spell printed %q (%v); want a number above the first block's 10", n, err)
			}
			switch {
			case guarded && count.repeats != 0:
				t.Errorf("%d numbers repeated", count.repeats)
			case !guarded && count.repeats == 0:
				t.Errorf("the control repeated nothing: the test cannot see a counter that started again")
			}
		})
	}
}

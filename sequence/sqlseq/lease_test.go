package sqlseq_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/snowflake"
	"github.com/sngen/sn/sequence/sqlseq"
)

// tiny is a layout with two worker ids, so that tests run out of them.
var tiny = snowflake.Layout{TimeBits: 44, WorkerBits: 1, SeqBits: 8, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}

func TestLeaserConformance(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			l := must(sqlseq.NewLeaser(newStore(t, b, b.open(t), sqlseq.Options{}), sqlseq.LeaserOptions{}))
			sequencetest.Run(t, func(t *testing.T) sequence.Gen {
				g, err := snowflake.New(t.Context(), snowflake.Twitter, snowflake.Options{Leaser: l})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { g.Close() })
				return g
			})
		})
	}
}

// The promises of a Lease on their own: bad arguments, a renewal after
// the deadline that fails even though no one took the id, a bound that
// renewals raise and never lower and that Release sets, a lost lease that
// can neither renew nor release.
func TestLease(t *testing.T) {
	ctx := t.Context()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s := newStore(t, b, b.open(t), sqlseq.Options{})
			l := must(sqlseq.NewLeaser(s, sqlseq.LeaserOptions{Name: "lease"}))
			for _, bad := range []struct {
				workers int64
				ttl     time.Duration
				l       *sqlseq.Leaser
			}{{-1, time.Second, l}, {2, 0, l}, {2, time.Microsecond, l}, {2, time.Second, must(sqlseq.NewLeaser(s, sqlseq.LeaserOptions{Name: strings.Repeat("n", 256)}))}} {
				if _, err := bad.l.Lease(ctx, layoutOf(bad.workers), bad.ttl); !errors.Is(err, sequence.ErrInvalidArgument) {
					t.Errorf("Lease(%d, %v): %v; want ErrInvalidArgument", bad.workers, bad.ttl, err)
				}
			}

			const ttl = 300 * time.Millisecond
			a, err := l.Lease(ctx, layoutOf(1), ttl)
			if err != nil {
				t.Fatal(err)
			}
			if a.Worker() != 0 || !a.Bound().IsZero() {
				t.Fatalf("the first lease of one id: worker %d, bound %v", a.Worker(), a.Bound())
			}
			if _, err := l.Lease(ctx, layoutOf(1), ttl); !errors.Is(err, sequence.ErrUnavailable) {
				t.Fatalf("a second lease of one held id: %v; want ErrUnavailable", err)
			}
			// Another name is another series of ids.
			if o, err := must(sqlseq.NewLeaser(s, sqlseq.LeaserOptions{Name: "other"})).Lease(ctx, layoutOf(1), ttl); err != nil || o.Worker() != 0 {
				t.Fatalf("the one id of another name: %v", err)
			}
			b1 := time.Unix(0, 1_000_000_000_000)
			b2 := b1.Add(time.Hour)
			if err := a.Renew(ctx, b2); err != nil {
				t.Fatal(err)
			}
			if err := a.Renew(ctx, b1); err != nil { // lower: the bound stays b2
				t.Fatal(err)
			}
			time.Sleep(ttl + 100*time.Millisecond)
			if err := a.Renew(ctx, b2); !errors.Is(err, sequence.ErrLeaseLost) {
				t.Fatalf("a renewal after the deadline, the id untaken: %v; want ErrLeaseLost", err)
			}
			if err := a.Release(ctx, b2); !errors.Is(err, sequence.ErrLeaseLost) {
				t.Fatalf("a release after the deadline: %v; want ErrLeaseLost", err)
			}
			c, err := l.Lease(ctx, layoutOf(1), ttl)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Bound().Equal(b2) {
				t.Fatalf("the next holder finds bound %v; want the highest renewed, %v", c.Bound(), b2)
			}
			if err := c.Renew(ctx, b2.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			b3 := b2.Add(time.Minute) // the holder's last id: below its renewed bound
			if err := c.Release(ctx, b3); err != nil {
				t.Fatal(err)
			}
			if err := c.Renew(ctx, b3); !errors.Is(err, sequence.ErrLeaseLost) {
				t.Fatalf("a renewal after Release: %v; want ErrLeaseLost", err)
			}
			d, err := l.Lease(ctx, layoutOf(1), ttl) // free at once
			if err != nil {
				t.Fatal(err)
			}
			if !d.Bound().Equal(b3) {
				t.Fatalf("after Release(%v) the next holder finds %v", b3, d.Bound())
			}
			// A holder that issued nothing releases with the zero bound:
			// the bound it found stays.
			if err := d.Release(ctx, time.Time{}); err != nil {
				t.Fatal(err)
			}
			e, err := l.Lease(ctx, layoutOf(1), ttl)
			if err != nil {
				t.Fatal(err)
			}
			if !e.Bound().Equal(b3) {
				t.Fatalf("after Release(zero time) the next holder finds %v; want %v kept", e.Bound(), b3)
			}
		})
	}
}

// Many processes that lease at once get distinct ids, as many as there
// are, and the others ErrUnavailable.
func TestLeaserConcurrent(t *testing.T) {
	ctx := t.Context()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			db.SetMaxOpenConns(32)
			l := must(sqlseq.NewLeaser(newStore(t, b, db, sqlseq.Options{}), sqlseq.LeaserOptions{}))
			const workers, callers = 8, 24
			var mu sync.Mutex
			got := map[int64]int{}
			refused := 0
			var wg sync.WaitGroup
			for range callers {
				wg.Go(func() {
					lease, err := l.Lease(ctx, layoutOf(workers), time.Minute)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case errors.Is(err, sequence.ErrUnavailable) && strings.Contains(err.Error(), "all 8 worker ids"):
						refused++
					case err != nil:
						t.Error(err)
					default:
						got[lease.Worker()]++
					}
				})
			}
			wg.Wait()
			for id, n := range got {
				if n != 1 || id < 0 || id >= workers {
					t.Errorf("worker %d leased %d times", id, n)
				}
			}
			if len(got) != workers || refused != callers-workers {
				t.Errorf("%d ids leased, %d refused; want %d and %d", len(got), refused, workers, callers-workers)
			}
		})
	}
}

// Every id is held once; a released id passes on, and its new holder
// issues above everything its old one issued.
func TestLeaserExclusive(t *testing.T) {
	ctx := t.Context()
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			l := must(sqlseq.NewLeaser(newStore(t, be, be.open(t), sqlseq.Options{}), sqlseq.LeaserOptions{Name: "exclusive"}))
			a, err := snowflake.New(ctx, tiny, snowflake.Options{Leaser: l})
			if err != nil {
				t.Fatal(err)
			}
			b, err := snowflake.New(ctx, tiny, snowflake.Options{Leaser: l})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if a.Worker() == b.Worker() {
				t.Fatalf("two live Gens hold worker %d", a.Worker())
			}
			if _, err := snowflake.New(ctx, tiny, snowflake.Options{Leaser: l}); !errors.Is(err, sequence.ErrUnavailable) || !strings.Contains(err.Error(), "all 2 worker ids") {
				t.Fatalf("a third Gen with two ids: %v", err)
			}
			var last int64
			for range 1000 {
				if last, err = a.Next(ctx, ""); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			c, err := snowflake.New(ctx, tiny, snowflake.Options{Leaser: l})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Worker() != a.Worker() {
				t.Fatalf("the released worker %d was not taken; got %d", a.Worker(), c.Worker())
			}
			if id, err := c.Next(ctx, ""); err != nil || id <= last {
				t.Errorf("the new holder's first id %d (%v) is not above the old holder's last %d", id, err, last)
			}
			if _, err := a.Next(ctx, ""); !errors.Is(err, sequence.ErrClosed) {
				t.Errorf("Next after Close: %v", err)
			}
		})
	}
}

// A Gen cut off from the database stops issuing before its lease can
// expire; the process that takes its worker id after the expiry issues
// above everything it issued, and the old Gen never issues again.
func TestLeaserTakeover(t *testing.T) {
	ctx := t.Context()
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			db, dsn := be.openDSN(t)
			l := must(sqlseq.NewLeaser(newStore(t, be, db, sqlseq.Options{}), sqlseq.LeaserOptions{}))
			// The old Gen's own *sql.DB, closed to cut it off.
			cut, err := sql.Open(be.driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			const ttl = 400 * time.Millisecond
			other, err := snowflake.New(ctx, tiny, snowflake.Options{Leaser: l, TTL: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			a, err := snowflake.New(ctx, tiny, snowflake.Options{Leaser: must(sqlseq.NewLeaser(newStore(t, be, cut, sqlseq.Options{}), sqlseq.LeaserOptions{})), TTL: ttl})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			seen := map[int64]bool{}
			issue := func(g *snowflake.Gen) error {
				id, err := g.Next(ctx, "")
				if err != nil {
					return err
				}
				if seen[id] {
					t.Fatalf("id %d issued twice", id)
				}
				seen[id] = true
				return nil
			}
			cut.Close()
			deadline := time.Now().Add(5 * time.Second)
			for {
				if err := issue(a); err != nil {
					if !errors.Is(err, sequence.ErrLeaseLost) {
						t.Fatalf("cut off from the database: %v; want ErrLeaseLost", err)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("a Gen cut off from the database kept issuing")
				}
			}
			var aLast int64
			for id := range seen {
				aLast = max(aLast, id)
			}
			// The other worker id is held: the new Gen gets this one once
			// its lease has expired on the database's clock.
			var b *snowflake.Gen
			for b == nil {
				b, err = snowflake.New(ctx, tiny, snowflake.Options{Leaser: l, TTL: ttl})
				if err != nil && !errors.Is(err, sequence.ErrUnavailable) {
					t.Fatal(err)
				}
				if time.Now().After(deadline) {
					t.Fatalf("the expired lease was never taken: %v", err)
				}
				time.Sleep(10 * time.Millisecond)
			}
			defer b.Close()
			if b.Worker() != a.Worker() {
				t.Fatalf("the new Gen took worker %d; want the expired %d", b.Worker(), a.Worker())
			}
			bFirst := int64(1 << 62)
			for range 500 {
				id, err := b.Next(ctx, "")
				if err != nil {
					t.Fatal(err)
				}
				if seen[id] {
					t.Fatalf("id %d issued twice", id)
				}
				seen[id] = true
				bFirst = min(bFirst, id)
			}
			if bFirst <= aLast {
				t.Errorf("the new holder issued %d, not above the old holder's last %d", bFirst, aLast)
			}
			if err := issue(a); !errors.Is(err, sequence.ErrLeaseLost) {
				t.Errorf("the old Gen after another took its id: %v; want ErrLeaseLost", err)
			}
			t.Logf("%d ids, worker %d passed on, 0 repeats", len(seen), a.Worker())
		})
	}
}

// A process that restarts with its clock set back takes a worker id whose
// recorded bound is ahead of its clock: it refuses until the clock has
// passed the bound, whether the old holder released the id or crashed.
func TestLeaserRestartAfterRollback(t *testing.T) {
	ctx := t.Context()
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			s := newStore(t, be, be.open(t), sqlseq.Options{})
			var mu sync.Mutex
			at := time.Now()
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
			set := func(t time.Time) { mu.Lock(); at = t; mu.Unlock() }
			for _, crash := range []bool{false, true} {
				l := must(sqlseq.NewLeaser(s, sqlseq.LeaserOptions{Name: "rollback-" + map[bool]string{false: "release", true: "crash"}[crash]}))
				hold, err := snowflake.New(ctx, tiny, snowflake.Options{Leaser: l, TTL: time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				ttl := time.Second // a renewal may take TTL/4: room for a loaded machine
				var lastID int64
				if crash {
					// A holder that records a bound and dies without releasing.
					lease, err := l.Lease(ctx, tiny, ttl)
					if err != nil {
						t.Fatal(err)
					}
					if err := lease.Renew(ctx, clock().Add(ttl)); err != nil {
						t.Fatal(err)
					}
					time.Sleep(ttl + 50*time.Millisecond)
				} else {
					a, err := snowflake.New(ctx, tiny, snowflake.Options{Leaser: l, TTL: ttl, Now: clock})
					if err != nil {
						t.Fatal(err)
					}
					// A new id: its Gen issues after a TTL on its clock.
					set(time.Now().Add(2 * ttl))
					time.Sleep(ttl / 2) // a renewal on the moved clock
					for range 100 {
						if lastID, err = a.Next(ctx, ""); err != nil {
							t.Fatal(err)
						}
					}
					a.Close()
				}
				start := clock()
				set(start.Add(-time.Hour)) // the machine's clock went back an hour
				b, err := snowflake.New(ctx, tiny, snowflake.Options{Leaser: l, TTL: ttl, Now: clock})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := b.Next(ctx, ""); !errors.Is(err, sequence.ErrClockRollback) {
					t.Errorf("crash=%v: a restart an hour back: %v; want ErrClockRollback", crash, err)
				}
				set(start.Add(2 * ttl))
				time.Sleep(ttl / 2) // a renewal on the new clock: it was made valid on the old one
				id, err := b.Next(ctx, "")
				if err != nil || id <= lastID {
					t.Errorf("crash=%v: once the clock is past the bound: %d, %v (old holder's last %d)", crash, id, err, lastID)
				}
				b.Close()
				hold.Close()
				set(time.Now())
			}
		})
	}
}

// layoutOf returns a layout of workers worker ids (a power of two; -1 for
// a layout with a negative number of worker bits).
func layoutOf(workers int64) snowflake.Layout {
	bits := -1
	for w := int64(1); w <= workers; w <<= 1 {
		bits++
	}
	return snowflake.Layout{TimeBits: 41, WorkerBits: bits, SeqBits: 12, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}
}

// The database loses the rows of two live holders, which hold both ids of
// the layout (an operator's DELETE, a restore of an older backup). A third
// process then leases one of their ids: it finds no bound and issues only
// after one TTL, by which time the holders have stopped (their renewals
// find no row): 0 repeats.
func TestLeaserDataLoss(t *testing.T) {
	const ttl = 400 * time.Millisecond
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := b.open(t)
			s := newStore(t, b, db, sqlseq.Options{})
			var mu sync.Mutex
			seen := map[int64]int{}
			repeats := 0
			issue := func(g *snowflake.Gen, who int, stop <-chan struct{}) error {
				for {
					select {
					case <-stop:
						return nil
					default:
					}
					ids, err := g.NextN(ctx, "", nil, 64)
					mu.Lock()
					for _, id := range ids {
						if w, ok := seen[id]; ok && w != who {
							repeats++
						}
						seen[id] = who
					}
					mu.Unlock()
					if err != nil {
						return err
					}
				}
			}
			newGen := func() *snowflake.Gen {
				g, err := snowflake.New(ctx, tiny, snowflake.Options{Leaser: must(sqlseq.NewLeaser(s, sqlseq.LeaserOptions{})), TTL: ttl})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { g.Close() })
				return g
			}
			holders := []*snowflake.Gen{newGen(), newGen()}
			stop := make(chan struct{})
			errs := make(chan error, 3)
			var wg sync.WaitGroup
			for i, h := range holders {
				wg.Go(func() { errs <- issue(h, i, stop) })
			}
			time.Sleep(2 * ttl)
			if _, err := db.ExecContext(ctx, "DELETE FROM sn_ledger_workers"); err != nil {
				t.Fatal(err)
			}
			third := newGen()
			wg.Go(func() { errs <- issue(third, 2, stop) })
			time.Sleep(3 * ttl)
			close(stop)
			wg.Wait()
			close(errs)
			stopped := 0
			for err := range errs {
				switch {
				case errors.Is(err, sequence.ErrLeaseLost):
					stopped++
				case err != nil:
					t.Errorf("a holder: %v", err)
				}
			}
			t.Logf("%d ids, %d holders stopped on a lost lease, %d repeats", len(seen), stopped, repeats)
			// The two holders whose lease the store lost stop; the third
			// may stop too, when a renewal times out on a loaded machine:
			// stopping is safe, a repeat is not.
			if repeats != 0 || stopped < 2 {
				t.Errorf("%d repeats, %d of the 2 holders whose lease was lost stopped", repeats, stopped)
			}
		})
	}
}

// A name records its layout with its first lease: a Gen with another
// layout is refused under it (snowflake.ErrLayout), and works under
// another name.
func TestLeaserLayout(t *testing.T) {
	ctx := t.Context()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s := newStore(t, b, b.open(t), sqlseq.Options{})
			a := snowflake.Layout{TimeBits: 41, WorkerBits: 2, SeqBits: 11, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}
			other := snowflake.Layout{TimeBits: 41, WorkerBits: 1, SeqBits: 12, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}
			lease, err := must(sqlseq.NewLeaser(s, sqlseq.LeaserOptions{})).Lease(ctx, a, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			defer lease.Release(ctx, time.Time{})
			_, err = must(sqlseq.NewLeaser(s, sqlseq.LeaserOptions{})).Lease(ctx, other, time.Minute)
			if !errors.Is(err, snowflake.ErrLayout) || !strings.Contains(err.Error(), a.String()) || !strings.Contains(err.Error(), other.String()) {
				t.Fatalf("another layout under one name: %v; want ErrLayout naming both", err)
			}
			o, err := must(sqlseq.NewLeaser(s, sqlseq.LeaserOptions{Name: "other"})).Lease(ctx, other, time.Minute)
			if err != nil {
				t.Fatalf("another layout under another name: %v", err)
			}
			o.Release(ctx, time.Time{})
		})
	}
}

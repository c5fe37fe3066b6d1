package sequencetest

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/snowflake"
)

// NewLeaser returns a [snowflake.Leaser] of the series name (a Leaser's
// name or prefix), over the store under test: every call for one test
// reaches the same store.
type NewLeaser func(t *testing.T, name string) snowflake.Leaser

// RunLeaser checks the promises of a [snowflake.Leaser] over a store:
// bad arguments refused; an id held once, and another name another
// series; a bound that renewals raise and never lower, that Release sets
// and that the next holder finds; a lease past its ttl that can neither
// renew nor release, even when nobody took the id; many callers at once
// given distinct ids and the rest ErrUnavailable; a released id passed on
// to a Gen that issues above its old holder; a layout recorded with a
// series' first lease; a restart with the clock set back refused until it
// passes the bound the id's last holder recorded, released or crashed.
// ttl is the shortest lease the store keeps (etcd counts in seconds).
func RunLeaser(t *testing.T, newLeaser NewLeaser, ttl time.Duration) {
	t.Run("Lease", func(t *testing.T) { leaseBounds(t, newLeaser, ttl) })
	t.Run("Concurrent", func(t *testing.T) { leaseConcurrent(t, newLeaser) })
	t.Run("Exclusive", func(t *testing.T) { leaseExclusive(t, newLeaser) })
	t.Run("Layout", func(t *testing.T) { leaseLayout(t, newLeaser) })
	t.Run("RestartAfterRollback", func(t *testing.T) { leaseRollback(t, newLeaser, ttl) })
}

// LayoutOf returns a layout with n worker ids (n a power of two).
func LayoutOf(n int64) snowflake.Layout {
	bits := 0
	for int64(1)<<bits < n {
		bits++
	}
	return snowflake.Layout{TimeBits: 63 - 12 - bits, WorkerBits: bits, SeqBits: 12, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}
}

func leaseBounds(t *testing.T, newLeaser NewLeaser, ttl time.Duration) {
	ctx := t.Context()
	l := newLeaser(t, "lease")
	for _, bad := range []time.Duration{0, time.Microsecond} {
		if _, err := l.Lease(ctx, LayoutOf(2), bad); !errors.Is(err, sequence.ErrInvalidArgument) {
			t.Errorf("Lease with ttl %v: %v; want ErrInvalidArgument", bad, err)
		}
	}
	a, err := l.Lease(ctx, LayoutOf(1), ttl)
	if err != nil {
		t.Fatal(err)
	}
	if a.Worker() != 0 || !a.Bound().IsZero() {
		t.Fatalf("the first lease of one id: worker %d, bound %v", a.Worker(), a.Bound())
	}
	if _, err := l.Lease(ctx, LayoutOf(1), ttl); !errors.Is(err, sequence.ErrUnavailable) {
		t.Fatalf("a second lease of one held id: %v; want ErrUnavailable", err)
	}
	if o, err := newLeaser(t, "other").Lease(ctx, LayoutOf(1), ttl); err != nil || o.Worker() != 0 {
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
	// Past the lease's ttl, nobody having taken the id: the renewal
	// fails (a store that expires leases itself may take a moment).
	for deadline := time.Now().Add(30 * time.Second); ; {
		time.Sleep(ttl + 100*time.Millisecond)
		err := a.Renew(ctx, b2)
		if errors.Is(err, sequence.ErrLeaseLost) {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("a renewal long after the lease's ttl: %v; want ErrLeaseLost", err)
		}
	}
	if err := a.Release(ctx, b2); !errors.Is(err, sequence.ErrLeaseLost) {
		t.Fatalf("a release after the ttl: %v; want ErrLeaseLost", err)
	}
	c, err := l.Lease(ctx, LayoutOf(1), ttl)
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
	d, err := l.Lease(ctx, LayoutOf(1), ttl) // free at once
	if err != nil {
		t.Fatal(err)
	}
	if !d.Bound().Equal(b3) {
		t.Fatalf("after Release(%v) the next holder finds %v", b3, d.Bound())
	}
	// A holder that issued nothing releases with the zero bound: the
	// bound it found stays.
	if err := d.Release(ctx, time.Time{}); err != nil {
		t.Fatal(err)
	}
	e, err := l.Lease(ctx, LayoutOf(1), ttl)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Bound().Equal(b3) {
		t.Fatalf("after Release(zero time) the next holder finds %v; want %v kept", e.Bound(), b3)
	}
}

func leaseConcurrent(t *testing.T, newLeaser NewLeaser) {
	ctx := t.Context()
	l := newLeaser(t, "concurrent")
	const workers, callers = 8, 24
	var mu sync.Mutex
	got := map[int64]int{}
	refused := 0
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			lease, err := l.Lease(ctx, LayoutOf(workers), time.Minute)
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
}

// exclusiveTTL is the TTL of the Gens of leaseExclusive.
const exclusiveTTL = 3 * time.Second

func leaseExclusive(t *testing.T, newLeaser NewLeaser) {
	ctx := t.Context()
	l := newLeaser(t, "exclusive")
	// Two worker ids, and few bits of sequence, so that a thousand ids
	// run into the clock's next tick. A fresh id's first holder waits one
	// TTL: a short one, not the default 10s.
	two := snowflake.Layout{TimeBits: 44, WorkerBits: 1, SeqBits: 8, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}
	a, err := snowflake.New(ctx, two, snowflake.Options{Leaser: l, TTL: exclusiveTTL})
	if err != nil {
		t.Fatal(err)
	}
	b, err := snowflake.New(ctx, two, snowflake.Options{Leaser: l, TTL: exclusiveTTL})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.Worker() == b.Worker() {
		t.Fatalf("two live Gens hold worker %d", a.Worker())
	}
	if _, err := snowflake.New(ctx, two, snowflake.Options{Leaser: l, TTL: exclusiveTTL}); !errors.Is(err, sequence.ErrUnavailable) || !strings.Contains(err.Error(), "all 2 worker ids") {
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
	c, err := snowflake.New(ctx, two, snowflake.Options{Leaser: l, TTL: exclusiveTTL})
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
}

func leaseLayout(t *testing.T, newLeaser NewLeaser) {
	ctx := t.Context()
	a := snowflake.Layout{TimeBits: 41, WorkerBits: 2, SeqBits: 11, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}
	other := snowflake.Layout{TimeBits: 41, WorkerBits: 1, SeqBits: 12, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}
	lease, err := newLeaser(t, "layout").Lease(ctx, a, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(ctx, time.Time{})
	_, err = newLeaser(t, "layout").Lease(ctx, other, time.Minute)
	if !errors.Is(err, snowflake.ErrLayout) || !strings.Contains(err.Error(), a.String()) || !strings.Contains(err.Error(), other.String()) {
		t.Fatalf("another layout under one name: %v; want ErrLayout naming both", err)
	}
	o, err := newLeaser(t, "layout-other").Lease(ctx, other, time.Minute)
	if err != nil {
		t.Fatalf("another layout under another name: %v", err)
	}
	o.Release(ctx, time.Time{})
}

// NewCutLeaser returns a Leaser of the series name over the store under
// test, through a connection of its own, and a function that cuts that
// connection (closes the client), as a partition or a dead network
// would.
type NewCutLeaser func(t *testing.T, name string) (l snowflake.Leaser, cut func())

// RunLeaserTakeover checks that a Gen cut off from its store stops
// issuing before its lease can expire; that the process that takes its
// worker id after the expiry, on the store's clock, issues above
// everything the first issued; and that the old Gen never issues again.
// The other worker id of a two-id layout is held throughout, so the id
// that passes on is the cut one. ttl is the lease of the cut Gen.
func RunLeaserTakeover(t *testing.T, newLeaser NewLeaser, newCut NewCutLeaser, ttl time.Duration) {
	ctx := t.Context()
	tiny := snowflake.Layout{TimeBits: 44, WorkerBits: 1, SeqBits: 8, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}
	l := newLeaser(t, "takeover")
	cutLeaser, cut := newCut(t, "takeover")
	other, err := snowflake.New(ctx, tiny, snowflake.Options{Leaser: l, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	a, err := snowflake.New(ctx, tiny, snowflake.Options{Leaser: cutLeaser, TTL: ttl})
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
	for range 100 {
		if err := issue(a); err != nil {
			t.Fatal(err)
		}
	}
	cut()
	deadline := time.Now().Add(10*time.Second + 2*ttl)
	for {
		if err := issue(a); err != nil {
			if !errors.Is(err, sequence.ErrLeaseLost) {
				t.Fatalf("cut off from the store: %v; want ErrLeaseLost", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a Gen cut off from the store kept issuing")
		}
	}
	var aLast int64
	for id := range seen {
		aLast = max(aLast, id)
	}
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
}

// leaseRollback: a process that restarts with its clock set back takes a
// worker id whose recorded bound is ahead of its clock: it refuses until
// the clock has passed the bound, whether the old holder released the id
// or crashed.
func leaseRollback(t *testing.T, newLeaser NewLeaser, ttl time.Duration) {
	ctx := t.Context()
	ttl = max(ttl, time.Second) // a renewal may take ttl/4: room for a loaded machine
	var mu sync.Mutex
	at := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
	set := func(t time.Time) { mu.Lock(); at = t; mu.Unlock() }
	for _, crash := range []bool{false, true} {
		l := newLeaser(t, "rollback-"+map[bool]string{false: "release", true: "crash"}[crash])
		one := snowflake.Layout{TimeBits: 44, WorkerBits: 1, SeqBits: 8, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}
		hold, err := snowflake.New(ctx, one, snowflake.Options{Leaser: l, TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		var lastID int64
		if crash {
			// A holder that records a bound and dies without releasing.
			lease, err := l.Lease(ctx, one, ttl)
			if err != nil {
				t.Fatal(err)
			}
			if err := lease.Renew(ctx, clock().Add(ttl)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(ttl + 50*time.Millisecond)
		} else {
			a, err := snowflake.New(ctx, one, snowflake.Options{Leaser: l, TTL: ttl, Now: clock})
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
		// The crashed holder's lease lapses on the store's clock, which
		// may keep a lease longer than asked (etcd's shortest is about
		// 1.5s): wait for it.
		var b *snowflake.Gen
		for deadline := time.Now().Add(10 * time.Second); b == nil; {
			b, err = snowflake.New(ctx, one, snowflake.Options{Leaser: l, TTL: ttl, Now: clock})
			if err != nil && (!errors.Is(err, sequence.ErrUnavailable) || time.Now().After(deadline)) {
				t.Fatal(err)
			}
			if b == nil {
				time.Sleep(50 * time.Millisecond)
			}
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
}

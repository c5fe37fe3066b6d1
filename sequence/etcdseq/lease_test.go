package etcdseq_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/sngen/sn/internal/etcdtest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/etcdseq"
	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/snowflake"
)

// tiny is a layout with two worker ids, so that tests run out of them.
var tiny = snowflake.Layout{TimeBits: 44, WorkerBits: 1, SeqBits: 8, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}

// layoutOf returns a layout with n worker ids (a power of two).
func layoutOf(n int64) snowflake.Layout {
	bits := 0
	for int64(1)<<bits < n {
		bits++
	}
	return snowflake.Layout{TimeBits: 63 - 12 - bits, WorkerBits: bits, SeqBits: 12, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}
}

func newLeaser(t *testing.T, name string) *etcdseq.Leaser {
	t.Helper()
	l, err := etcdseq.NewLeaser(newStore(t, etcdtest.Shared(t), etcdseq.Options{}), etcdseq.LeaserOptions{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLeaserConformance(t *testing.T) {
	l := newLeaser(t, "")
	sequencetest.Run(t, func(t *testing.T) sequence.Gen {
		g, err := snowflake.New(t.Context(), snowflake.Twitter, snowflake.Options{Leaser: l, TTL: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		return g
	})
}

// The promises of a Lease on their own: bad arguments; a renewal after the
// etcd lease expired fails even though no one took the id; a bound that
// renewals raise and never lower and that Release sets; a lost lease can
// neither renew nor release.
func TestLease(t *testing.T) {
	ctx := t.Context()
	l := newLeaser(t, "lease")
	if _, err := etcdseq.NewLeaser(nil, etcdseq.LeaserOptions{}); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("NewLeaser(nil): %v", err)
	}
	for _, bad := range []struct {
		workers int64
		ttl     time.Duration
	}{{2, 0}, {2, time.Microsecond}} {
		if _, err := l.Lease(ctx, layoutOf(bad.workers), bad.ttl); !errors.Is(err, sequence.ErrInvalidArgument) {
			t.Errorf("Lease(%d, %v): %v; want ErrInvalidArgument", bad.workers, bad.ttl, err)
		}
	}
	const ttl = time.Second // etcd counts leases in seconds
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
	if o, err := newLeaser(t, "other").Lease(ctx, layoutOf(1), ttl); err != nil || o.Worker() != 0 {
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
	// Past the lease's expiry: etcd deletes the holder key.
	deadline := time.Now().Add(30 * time.Second)
	for {
		time.Sleep(ttl)
		if _, err := l.Lease(ctx, layoutOf(1), ttl); err == nil {
			t.Fatal("Lease took the id while its expired holder's lease was counted as taken below")
		}
		err := a.Renew(ctx, b2)
		if errors.Is(err, sequence.ErrLeaseLost) {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("a renewal long after the lease's ttl: %v", err)
		}
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
}

// Many processes that lease at once get distinct ids, as many as there
// are, and the others ErrUnavailable.
func TestLeaserConcurrent(t *testing.T) {
	ctx := t.Context()
	l := newLeaser(t, "")
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
}

// Every id is held once; a released id passes on, and its new holder
// issues above everything its old one issued; the layout is the name's.
func TestLeaserExclusive(t *testing.T) {
	ctx := t.Context()
	l := newLeaser(t, "exclusive")
	a, err := snowflake.New(ctx, tiny, snowflake.Options{Leaser: l, TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	b, err := snowflake.New(ctx, tiny, snowflake.Options{Leaser: l, TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.Worker() == b.Worker() {
		t.Fatalf("two live Gens hold worker %d", a.Worker())
	}
	if _, err := snowflake.New(ctx, tiny, snowflake.Options{Leaser: l, TTL: 2 * time.Second}); !errors.Is(err, sequence.ErrUnavailable) || !strings.Contains(err.Error(), "all 2 worker ids") {
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
	c, err := snowflake.New(ctx, tiny, snowflake.Options{Leaser: l, TTL: 2 * time.Second})
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
	if _, err := snowflake.New(ctx, snowflake.Twitter, snowflake.Options{Leaser: l}); !errors.Is(err, snowflake.ErrLayout) {
		t.Errorf("a Gen of another layout on the same name: %v; want ErrLayout", err)
	}
}

// A Gen cut off from the cluster stops issuing before its lease can
// expire; the process that takes its worker id after the expiry issues
// above everything it issued, and the old Gen never issues again.
func TestLeaserTakeover(t *testing.T) {
	ctx := t.Context()
	c := etcdtest.Shared(t)
	l := newLeaser(t, "takeover")
	prefix := l.Prefix()
	// The old Gen's own client, closed to cut it off.
	cut, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	cutStore, err := etcdseq.New(cut, etcdseq.Options{Prefix: prefix, AttemptTimeout: 200 * time.Millisecond, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cutLeaser, err := etcdseq.NewLeaser(cutStore, etcdseq.LeaserOptions{Name: "takeover"})
	if err != nil {
		t.Fatal(err)
	}
	const ttl = time.Second
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
	cut.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := issue(a); err != nil {
			if !errors.Is(err, sequence.ErrLeaseLost) {
				t.Fatalf("cut off from the cluster: %v; want ErrLeaseLost", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a Gen cut off from the cluster kept issuing")
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
		time.Sleep(50 * time.Millisecond)
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

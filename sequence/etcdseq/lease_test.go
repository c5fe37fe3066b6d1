package etcdseq_test

import (
	"errors"
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

// The promises of every Leaser (sequencetest.RunLeaser).
func TestLeaser(t *testing.T) {
	s := newStore(t, etcdtest.Shared(t), etcdseq.Options{})
	sequencetest.RunLeaser(t, func(t *testing.T, name string) snowflake.Leaser {
		l, err := etcdseq.NewLeaser(s, etcdseq.LeaserOptions{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}, time.Second) // etcd counts leases in seconds
	if _, err := etcdseq.NewLeaser(nil, etcdseq.LeaserOptions{}); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("NewLeaser(nil): %v", err)
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

package etcdseq_test

import (
	"errors"
	"fmt"
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
	}, time.Second) // a Raft commit per step: a loaded machine is slow
	if _, err := etcdseq.NewLeaser(nil, etcdseq.LeaserOptions{}); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("NewLeaser(nil): %v", err)
	}
}

// A Gen cut off from the cluster (its client closed) stops issuing; the
// one that takes its id issues above it (sequencetest.RunLeaserTakeover).
func TestLeaserTakeover(t *testing.T) {
	c := etcdtest.Shared(t)
	s := newStore(t, c, etcdseq.Options{})
	sequencetest.RunLeaserTakeover(t, func(t *testing.T, name string) snowflake.Leaser {
		return must(etcdseq.NewLeaser(s, etcdseq.LeaserOptions{Name: name}))
	}, func(t *testing.T, name string) (snowflake.Leaser, func()) {
		cut, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			t.Fatal(err)
		}
		cs := must(etcdseq.New(cut, etcdseq.Options{Prefix: s.Prefix(), AttemptTimeout: 200 * time.Millisecond, Timeout: time.Second}))
		return must(etcdseq.NewLeaser(cs, etcdseq.LeaserOptions{Name: name})), func() { cut.Close() }
	}, time.Second)
}

// TestLeaseBesideEarlier: processes of release e791946, which kept
// worker ids in keys of their own (w/NAME/ID/holder under an etcd lease,
// w/NAME/ID/bound), still run beside this release's. Its holder of id 0
// keeps it, renewing as before, and a Lease of this release passes it by
// (ErrUnavailable with both ids of the layout held); id 1, released, is
// taken with its bound, and the release's take of it after fails, for
// the take put its holder key. Once the release's holder lets id 0 go, a
// Lease takes it above the bound it recorded. Another layout is refused
// for the name, and a name this release leased first carries its layout
// for the earlier one.
func TestLeaseBesideEarlier(t *testing.T) {
	ctx := t.Context()
	c := etcdtest.Shared(t)
	s := newStore(t, c, etcdseq.Options{})
	cli, p := c.Client(t), s.Prefix()
	live, released := time.Now().Add(time.Hour).UnixNano(), time.Now().Add(2*time.Hour).UnixNano()
	g, err := cli.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"r/snowflake layout snowflake": tiny.String(),
		"w/snowflake/0/bound":          fmt.Sprintf("%020d", live),
		"w/snowflake/1/bound":          fmt.Sprintf("%020d", released),
	} {
		if _, err := cli.Put(ctx, p+k, v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cli.Put(ctx, p+"w/snowflake/0/holder", "live", clientv3.WithLease(g.ID)); err != nil {
		t.Fatal(err)
	}
	// The release's renewal, take and release, as its lease.go wrote them.
	renew := func(bound int64) bool {
		r, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.Value(p+"w/snowflake/0/holder"), "=", "live")).
			Then(clientv3.OpPut(p+"w/snowflake/0/bound", fmt.Sprintf("%020d", bound))).Commit()
		return err == nil && r.Succeeded
	}
	take := func(id string) bool {
		r, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(p+"w/snowflake/"+id+"/holder"), "=", 0)).
			Then(clientv3.OpPut(p+"w/snowflake/"+id+"/holder", "old", clientv3.WithLease(g.ID))).Commit()
		return err == nil && r.Succeeded
	}
	l := must(etcdseq.NewLeaser(s, etcdseq.LeaserOptions{}))
	if _, err := l.Lease(ctx, snowflake.Twitter, time.Minute); !errors.Is(err, snowflake.ErrLayout) {
		t.Errorf("a Lease in another layout than the release's: %v; want ErrLayout", err)
	}
	one, err := l.Lease(ctx, tiny, time.Minute)
	if err != nil || one.Worker() != 1 || one.Bound().UnixNano() != released {
		t.Fatalf("first Lease: %v; want id 1, free, with the release's bound %d", err, released)
	}
	if take("1") {
		t.Error("the release took id 1 after this release's Lease took it")
	}
	live += int64(time.Second)
	if !renew(live) {
		t.Error("the release's holder of id 0 could not renew: it must keep its id")
	}
	if _, err := l.Lease(ctx, tiny, time.Minute); !errors.Is(err, sequence.ErrUnavailable) {
		t.Fatalf("a Lease while the release holds id 0: %v; want ErrUnavailable", err)
	}
	// The release's holder lets id 0 go: its bound, and no holder.
	live += int64(time.Second)
	if r, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.Value(p+"w/snowflake/0/holder"), "=", "live")).
		Then(clientv3.OpPut(p+"w/snowflake/0/bound", fmt.Sprintf("%020d", live)), clientv3.OpDelete(p+"w/snowflake/0/holder")).Commit(); err != nil || !r.Succeeded {
		t.Fatal(err)
	}
	zero, err := l.Lease(ctx, tiny, time.Minute)
	if err != nil || zero.Worker() != 0 || zero.Bound().UnixNano() != live {
		t.Fatalf("after the release let id 0 go: %v; want id 0 above its bound %d", err, live)
	}
	if take("0") {
		t.Error("the release took id 0 after this release's Lease took it")
	}
	// A name this release leases first: its layout is the release's too.
	if _, err := must(etcdseq.NewLeaser(s, etcdseq.LeaserOptions{Name: "fresh"})).Lease(ctx, tiny, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, err := sequence.Remember(ctx, s, "snowflake layout fresh", snowflake.Twitter.String()); err != nil || got != tiny.String() {
		t.Errorf("the release reads the layout of a name this release leased first as %q, %v; want %q", got, err, tiny.String())
	}
}

package etcdseq_test

import (
	"errors"
	"fmt"
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

// TestMigrateWorkers opens a cluster whose worker-id leases release
// e791946 kept in keys of their own: a live holder of id 0, under an etcd
// lease of 2s, and id 1, released with a bound; and the layout of their
// name. Three Stores lease at once, each moving them. Then a Lease in the
// layout takes id 1 first, with its bound; id 0 stays held for its etcd
// lease's ttl and a second, and is then leased with the bound the holder
// renewed to; the release's renewal, run by a process of it still
// running, fails (its lease is lost), and its check of the layout reads
// one that is no layout. The control: before the move, the release's
// renewal renews.
func TestMigrateWorkers(t *testing.T) {
	ctx := t.Context()
	c := etcdtest.Shared(t)
	first := newStore(t, c, etcdseq.Options{})
	cli, p := c.Client(t), first.Prefix()
	live, released := time.Now().Add(time.Hour).UnixNano(), time.Now().Add(2*time.Hour).UnixNano()
	g, err := cli.Grant(ctx, 2)
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
	// The release's renewal of its live lease, as its lease.go wrote it.
	renewed := func(bound int64) bool {
		if _, err := cli.KeepAliveOnce(ctx, g.ID); err != nil {
			return false
		}
		r, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.Value(p+"w/snowflake/0/holder"), "=", "live")).
			Then(clientv3.OpPut(p+"w/snowflake/0/bound", fmt.Sprintf("%020d", bound))).Commit()
		return err == nil && r.Succeeded
	}
	live++
	if !renewed(live) {
		t.Fatal("control: the release's renewal before the move did not renew")
	}
	stores := []*etcdseq.Store{first, must(etcdseq.New(cli, etcdseq.Options{Prefix: p})), must(etcdseq.New(cli, etcdseq.Options{Prefix: p}))}
	var wg sync.WaitGroup
	for _, s := range stores {
		wg.Go(func() {
			if _, err := must(etcdseq.NewLeaser(s, etcdseq.LeaserOptions{Name: "other"})).Lease(ctx, layoutOf(8), time.Minute); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if renewed(live + 1) {
		t.Error("the release's renewal after the move renewed: its lease is not lost")
	}
	if got, err := sequence.Remember(ctx, first, "snowflake layout snowflake", tiny.String()); err != nil || !strings.Contains(got, "upgrade every process") {
		t.Errorf("the release's check of the layout reads %q, %v; want a value that is no layout, saying to upgrade", got, err)
	}
	l := must(etcdseq.NewLeaser(stores[1], etcdseq.LeaserOptions{}))
	one, err := l.Lease(ctx, tiny, time.Minute)
	if err != nil || one.Worker() != 1 || one.Bound().UnixNano() != released {
		t.Fatalf("first Lease: %v; want id 1, released, with its bound %d", err, released)
	}
	if _, err := l.Lease(ctx, tiny, time.Minute); !errors.Is(err, sequence.ErrUnavailable) {
		t.Fatalf("a Lease while the release holder's lease runs: %v; want ErrUnavailable", err)
	}
	var zero snowflake.Lease
	for deadline := time.Now().Add(15 * time.Second); zero == nil; time.Sleep(100 * time.Millisecond) {
		if zero, err = l.Lease(ctx, tiny, time.Minute); err != nil && time.Now().After(deadline) {
			t.Fatalf("id 0 never came free: %v", err)
		}
	}
	if zero.Worker() != 0 || zero.Bound().UnixNano() != live {
		t.Errorf("after its ttl: id %d with bound %d; want id 0 with the bound its holder renewed to, %d", zero.Worker(), zero.Bound().UnixNano(), live)
	}
}

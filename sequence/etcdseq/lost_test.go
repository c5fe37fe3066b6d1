package etcdseq_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sngen/sn/internal/etcdtest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/etcdseq"
)

// The tests here come from an adversarial review. They lose the answer of
// a transaction that etcd applied, as an attempt whose answer arrives
// after its deadline would (a slow disk, a member cut off after it
// forwarded the request), or run another process between the Store's read
// and its transaction.

// interceptClient returns a client of c whose next Txn, once armed, runs
// before (if not nil) before it is sent, and after (if not nil) after etcd
// applied it, its answer then lost.
type interceptClient struct {
	armed         atomic.Bool
	before, after func()
}

func (l *interceptClient) client(t *testing.T, c *etcdtest.Cluster) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			if method != "/etcdserverpb.KV/Txn" || !l.armed.CompareAndSwap(true, false) {
				return invoker(ctx, method, req, reply, cc, opts...)
			}
			if l.before != nil {
				l.before()
			}
			err := invoker(ctx, method, req, reply, cc, opts...)
			if err == nil && l.after != nil {
				l.after()
				return status.Error(codes.DeadlineExceeded, "test: the answer was lost after etcd applied the transaction")
			}
			return err
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// A Return whose answer was lost reads nothing again: had it read the
// counter again and retried, after another process reserved the returned
// range in between, it would have taken that process's range back, for a
// third to reserve again.
func TestReturnLostAnswer(t *testing.T) {
	c := etcdtest.Shared(t)
	ctx := t.Context()
	var l interceptClient
	a := newStoreOver(t, l.client(t, c), "")
	b := newStoreOver(t, c.Client(t), a.Prefix())
	ra, err := a.Allocate(ctx, "k", 10)
	if err != nil {
		t.Fatal(err)
	}
	var issued []sequence.Range
	l.after = func() { // another machine reserves in the window
		rb, err := b.Allocate(context.Background(), "k", 10)
		if err != nil {
			t.Error(err)
		}
		issued = append(issued, rb)
	}
	l.armed.Store(true)
	// The client sends the transaction again on its own: its compare
	// fails, and Return says it returned nothing, which the caller may
	// believe (it issues nothing from the range either way).
	ok, err := a.Return(ctx, "k", ra)
	if ok || err != nil && !errors.Is(err, sequence.ErrUnavailable) {
		t.Errorf("Return with its answer lost = %v, %v; want false", ok, err)
	}
	rc, err := b.Allocate(ctx, "k", 10) // a third machine
	if err != nil {
		t.Fatal(err)
	}
	issued = append(issued, rc)
	if issued[0] == issued[1] {
		t.Errorf("range %v reserved twice", rc)
	}
}

// A Return that lost its race to another process's Allocate takes nothing
// back, and says so.
func TestReturnLostRace(t *testing.T) {
	c := etcdtest.Shared(t)
	ctx := t.Context()
	var l interceptClient
	a := newStoreOver(t, l.client(t, c), "")
	b := newStoreOver(t, c.Client(t), a.Prefix())
	ra, err := a.Allocate(ctx, "k", 10)
	if err != nil {
		t.Fatal(err)
	}
	var rb sequence.Range
	l.before = func() { rb, _ = b.Allocate(context.Background(), "k", 10) }
	l.armed.Store(true)
	ok, err := a.Return(ctx, "k", ra)
	last, _ := a.Last(ctx, "k")
	if ok || err != nil || last != rb.Last {
		t.Errorf("Return(%v) after another reserved %v = %v, %v, the mark %d; want false and the mark %d", ra, rb, ok, err, last, rb.Last)
	}
}

// Allocate, Floor and Mark whose answers were lost are tried again: they
// only raise the counter, so a gap at worst. Forget reports the entry it
// removed.
func TestLostAnswersThatRaise(t *testing.T) {
	c := etcdtest.Shared(t)
	ctx := t.Context()
	var l interceptClient
	l.after = func() {}
	a := newStoreOver(t, l.client(t, c), "")
	r1, err := a.Allocate(ctx, "k", 10)
	if err != nil {
		t.Fatal(err)
	}
	l.armed.Store(true)
	r2, err := a.Allocate(ctx, "k", 10)
	if err != nil || r2.First <= r1.Last {
		t.Errorf("Allocate after %v, its answer lost: %v, %v; want a range above", r1, r2, err)
	}
	l.armed.Store(true)
	if err := a.Floor(ctx, "k", 100); err != nil {
		t.Errorf("Floor, its answer lost: %v", err)
	}
	if _, err := catalog.Of(a).Enroll(ctx, catalog.Entry{ID: "t1"}, func([]catalog.Entry) error { return nil }); err != nil {
		t.Fatal(err)
	}
	l.armed.Store(true)
	if gone, err := catalog.Of(a).Forget(ctx, "t1"); !gone || err != nil {
		t.Errorf("Forget, its answer lost = %v, %v; want true", gone, err)
	}
}

// Races lost under contention count against Timeout, and the error says
// that it was contention, not a cluster that did not answer.
func TestContention(t *testing.T) {
	c := etcdtest.Shared(t)
	first := newStoreOver(t, c.Client(t), "")
	var stores []*etcdseq.Store
	for range 4 {
		s, err := etcdseq.New(c.Client(t), etcdseq.Options{Prefix: first.Prefix(), Timeout: 30 * time.Millisecond, AttemptTimeout: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var raced, other []error
	for g := range 32 {
		wg.Go(func() {
			for range 30 {
				_, err := stores[g%4].Allocate(context.Background(), "hot", 1)
				mu.Lock()
				switch {
				case err == nil:
				case errors.Is(err, sequence.ErrUnavailable) && strings.Contains(err.Error(), "lost a race"):
					raced = append(raced, err)
				case errors.Is(err, sequence.ErrUnavailable) && strings.Contains(err.Error(), "did not answer"):
					// an attempt cut by its 20ms deadline on a busy machine
				default:
					other = append(other, err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(other) > 0 {
		t.Errorf("%d errors neither contention nor no answer, such as %v", len(other), other[0])
	}
	t.Logf("%d calls lost their races past the Timeout", len(raced))
}

// A prefix that could nest in another Store's keys is refused: one in
// another's counters ("p/n/"), records, catalog or worker keys, or with an
// empty or relative part.
func TestPrefixRefused(t *testing.T) {
	cli := etcdtest.Shared(t).Client(t)
	for _, p := range []string{"p/n/", "n/", "p/r/", "p/cat/", "p/w/", "p/id/", "p//", "p/../", "./", "p"} {
		if _, err := etcdseq.New(cli, etcdseq.Options{Prefix: p}); !errors.Is(err, sequence.ErrInvalidArgument) {
			t.Errorf("New with prefix %q: %v; want ErrInvalidArgument", p, err)
		}
	}
	for _, p := range []string{"sn/", "billing/sn/", "a/b/c/"} {
		if _, err := etcdseq.New(cli, etcdseq.Options{Prefix: p}); err != nil {
			t.Errorf("New with prefix %q: %v", p, err)
		}
	}
	if _, err := etcdseq.New(cli, etcdseq.Options{Timeout: time.Second, AttemptTimeout: time.Second}); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("New with an attempt as long as the call: %v", err)
	}
}

// newStoreOver returns a Store over cli with prefix, or a prefix of the
// test's own.
func newStoreOver(t *testing.T, cli *clientv3.Client, prefix string) *etcdseq.Store {
	t.Helper()
	if prefix == "" {
		prefix = newStore(t, etcdtest.Shared(t), etcdseq.Options{}).Prefix()
	}
	s, err := etcdseq.New(cli, etcdseq.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

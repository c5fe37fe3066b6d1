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

// The record leaser (snowflake.RecordLeaser) over the Store's records:
// the promises of every Leaser, timed by the Store's clock.
func TestRecordLeaser(t *testing.T) {
	s := newStore(t, etcdtest.Shared(t), etcdseq.Options{})
	sequencetest.RunLeaser(t, func(t *testing.T, name string) snowflake.Leaser {
		l, err := snowflake.NewRecordLeaser(s.Records(), name)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}, 300*time.Millisecond)
}

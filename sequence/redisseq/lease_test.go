package redisseq_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/snowflake"
)

// tiny is a layout with two worker ids, so that tests run out of them.
var tiny = snowflake.Layout{TimeBits: 44, WorkerBits: 1, SeqBits: 8, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}

func TestLeaserConformance(t *testing.T) {
	rdb := redistest.Start(t, redistest.Persistent()).Client(t)
	l := must(redisseq.NewLeaser(rdb, redisseq.LeaserOptions{}))
	sequencetest.Run(t, func(t *testing.T) sequence.Gen {
		g, err := snowflake.New(t.Context(), snowflake.Twitter, snowflake.Options{Leaser: l})
		if err != nil {
			t.Fatal(err)
		}
		return g
	})
}

func TestLeaserRefusesUnsafeRedis(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	_, err := snowflake.New(t.Context(), snowflake.Twitter, snowflake.Options{Leaser: must(redisseq.NewLeaser(rdb, redisseq.LeaserOptions{}))})
	if !errors.Is(err, redisseq.ErrUnsafe) {
		t.Errorf("a Redis without appendfsync always: %v; want ErrUnsafe", err)
	}
}

// The promises of every Leaser (sequencetest.RunLeaser).
func TestLeaser(t *testing.T) {
	rdb := redistest.Start(t, redistest.Persistent()).Client(t)
	sequencetest.RunLeaser(t, func(t *testing.T, name string) snowflake.Leaser {
		return must(redisseq.NewLeaser(rdb, redisseq.LeaserOptions{Name: name}))
	}, 300*time.Millisecond)
}

// A holder that issued nothing releases its id with the zero bound (as
// snowflake.New does when its first renewal fails): the bound its earlier
// holders recorded stays, for the next holder to issue after.
func TestLeaserReleaseKeepsBound(t *testing.T) {
	ctx := t.Context()
	l := must(redisseq.NewLeaser(redistest.Start(t, redistest.Persistent()).Client(t), redisseq.LeaserOptions{}))
	first, err := l.Lease(ctx, snowflake.Layout{TimeBits: 41, SeqBits: 12, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	bound := time.Now().Add(time.Hour).Round(0)
	if err := first.Release(ctx, bound); err != nil {
		t.Fatal(err)
	}
	idle, err := l.Lease(ctx, snowflake.Layout{TimeBits: 41, SeqBits: 12, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !idle.Bound().Equal(bound) {
		t.Fatalf("the second holder found bound %v; want %v", idle.Bound(), bound)
	}
	if err := idle.Release(ctx, time.Time{}); err != nil {
		t.Fatal(err)
	}
	third, err := l.Lease(ctx, snowflake.Layout{TimeBits: 41, SeqBits: 12, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Release(ctx, time.Time{})
	if !third.Bound().Equal(bound) {
		t.Errorf("after a holder that issued nothing released the id, the bound is %v; want %v", third.Bound(), bound)
	}
}

// A Gen cut off from Redis (its client closed) stops issuing; the one
// that takes its id issues above it (sequencetest.RunLeaserTakeover).
func TestLeaserTakeover(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	rdb := srv.Client(t)
	sequencetest.RunLeaserTakeover(t, func(t *testing.T, name string) snowflake.Leaser {
		return must(redisseq.NewLeaser(rdb, redisseq.LeaserOptions{Name: name}))
	}, func(t *testing.T, name string) (snowflake.Leaser, func()) {
		cut := srv.Client(t)
		return must(redisseq.NewLeaser(cut, redisseq.LeaserOptions{Name: name})), func() { cut.Close() }
	}, 400*time.Millisecond)
}

// The record leaser (snowflake.RecordLeaser) over the records of a Redis
// without a ledger: the promises of every Leaser, timed by the server's
// clock.
func TestRecordLeaser(t *testing.T) {
	a := must(redisseq.NewRedisOnlyAllocator(redistest.Start(t, redistest.Persistent()).Client(t), redisseq.AllocatorOptions{}))
	sequencetest.RunLeaser(t, func(t *testing.T, name string) snowflake.Leaser {
		return must(snowflake.NewRecordLeaser(a.Records(), name))
	}, 300*time.Millisecond)
}

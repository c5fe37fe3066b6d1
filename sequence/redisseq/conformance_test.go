package redisseq_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/redisseq"
	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/sqlseq"
)

// topologies returns a client of a single Redis and one of a three-master
// Redis Cluster, by name.
func topologies(t *testing.T) []struct {
	name string
	rdb  redis.UniversalClient
} {
	return []struct {
		name string
		rdb  redis.UniversalClient
	}{
		{"single", redistest.Start(t).Client(t)},
		{"cluster", redistest.SharedCluster(t).Client(t)},
	}
}

// An Allocator without a ledger, on a Redis that fsyncs every write.
func TestConformanceRedisOnly(t *testing.T) {
	rdb := redistest.Start(t, redistest.Persistent()).Client(t)
	sequencetest.RunAllocator(t, func(t *testing.T) sequence.Allocator {
		return must(redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{}))
	})
}

// pgLedger returns a ledger in a new, empty PostgreSQL database.
func pgLedger(tb testing.TB) *sqlseq.Store {
	tb.Helper()
	pg := pgtest.Shared(tb)
	ledger, err := sqlseq.New(pg.DB(tb, pg.NewDatabase(tb)), sqlseq.Postgres, sqlseq.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	if err := ledger.Migrate(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return ledger
}

// The Allocator and the strict Counter over a PostgreSQL ledger, on one
// server and on a Cluster.
func TestConformance(t *testing.T) {
	for _, top := range topologies(t) {
		t.Run(top.name, func(t *testing.T) {
			// The two topologies are two servers and two databases: they
			// run side by side, as most of the time is spent waiting on
			// them.
			t.Parallel()
			ledger := pgLedger(t) // shared by every Allocator and Counter on this Redis
			t.Run("Allocator", func(t *testing.T) {
				sequencetest.RunAllocator(t, func(t *testing.T) sequence.Allocator {
					return must(redisseq.NewAllocator(top.rdb, ledger, redisseq.AllocatorOptions{Chunk: 50}))
				})
			})
			t.Run("Segment", func(t *testing.T) {
				sequencetest.Run(t, func(t *testing.T) sequence.Gen {
					return must(sequence.NewSegment(must(redisseq.NewAllocator(top.rdb, ledger, redisseq.AllocatorOptions{})), sequence.SegmentOptions{Step: 100}))
				})
			})
			t.Run("Counter", func(t *testing.T) {
				sequencetest.Run(t, func(t *testing.T) sequence.Gen {
					return must(redisseq.NewCounter(top.rdb, ledger, redisseq.CounterOptions{Step: 100}))
				})
			})
			t.Run("CounterStep5", func(t *testing.T) {
				// Every fifth number needs a refill: the lock and install paths
				// under the suite's concurrency.
				sequencetest.Run(t, func(t *testing.T) sequence.Gen {
					return must(redisseq.NewCounter(top.rdb, ledger, redisseq.CounterOptions{Step: 5, Prefix: "step5:"}))
				})
			})
		})
	}
}

// Marks and expiry: the Allocator without a ledger, and the Allocator and
// the Counter over a PostgreSQL ledger, on one server and on a Cluster.
func TestExpirer(t *testing.T) {
	t.Run("RedisOnly", func(t *testing.T) {
		a := must(redisseq.NewRedisOnlyAllocator(redistest.Start(t, redistest.Persistent()).Client(t), redisseq.AllocatorOptions{}))
		sequencetest.RunExpirer(t, a, sequencetest.AllocDraw(a))
	})
	for _, top := range topologies(t) {
		t.Run(top.name, func(t *testing.T) {
			ledger := pgLedger(t)
			t.Run("Allocator", func(t *testing.T) {
				a := must(redisseq.NewAllocator(top.rdb, ledger, redisseq.AllocatorOptions{Chunk: 50}))
				sequencetest.RunExpirer(t, a, sequencetest.AllocDraw(a))
			})
			t.Run("Counter", func(t *testing.T) {
				c := must(redisseq.NewCounter(top.rdb, ledger, redisseq.CounterOptions{Step: 100, Prefix: "expire:"}))
				sequencetest.RunExpirer(t, c, c.Next)
			})
		})
	}
}

// The claims of idempotency keys without a ledger, kept in Redis.
func TestReplayerRedisOnly(t *testing.T) {
	rdb := redistest.Start(t, redistest.Persistent()).Client(t)
	sequencetest.RunReplayer(t, claim.Of(must(redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{Prefix: "claims:"}))))
}

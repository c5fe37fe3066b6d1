package redisseq_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
	"github.com/sngen/sn/sequence/sqlseq"
)

// countingLedger counts the calls that reach a ledger.
type countingLedger struct {
	*sqlseq.Store
	calls atomic.Int64
}

func (l *countingLedger) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	l.calls.Add(1)
	return l.Store.Allocate(ctx, key, n)
}

// report reports how many numbers were issued per call to the ledger.
func (l *countingLedger) report(b *testing.B) {
	b.ReportMetric(float64(b.N)/float64(max(1, l.calls.Load())), "numbers/ledger-call")
}

// BenchmarkRedis compares, against one redis-server and at the same
// concurrency (RunParallel with 8 goroutines per CPU), a plain INCR per
// number with the ways this package issues numbers, over a PostgreSQL
// ledger. Every sub-benchmark reports the cost of one number, and those
// with a ledger how many numbers each call to it served.
func BenchmarkRedis(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := context.Background()
	pg := pgLedger(b)
	ledger := func(b *testing.B) *countingLedger {
		l := &countingLedger{Store: pg}
		b.Cleanup(func() { l.report(b) })
		return l
	}
	parallel := func(b *testing.B, next func() error) {
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := next(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}

	b.Run("INCR", func(b *testing.B) {
		parallel(b, func() error { return rdb.Incr(ctx, "bench:incr").Err() })
	})
	b.Run("Segment+Allocator", func(b *testing.B) {
		seg := must(sequence.NewSegment(must(redisseq.NewAllocator(rdb, ledger(b), redisseq.AllocatorOptions{Prefix: "bench:"})),
			sequence.SegmentOptions{Step: 1000, MaxStep: 1000}))
		defer seg.Close()
		parallel(b, func() error { _, err := seg.Next(ctx, "segment"); return err })
	})
	b.Run("Segment(adaptive)+Allocator", func(b *testing.B) {
		seg := must(sequence.NewSegment(must(redisseq.NewAllocator(rdb, ledger(b), redisseq.AllocatorOptions{Prefix: "bench:"})),
			sequence.SegmentOptions{}))
		defer seg.Close()
		parallel(b, func() error { _, err := seg.Next(ctx, "adaptive"); return err })
	})
	b.Run("Counter", func(b *testing.B) {
		c := must(redisseq.NewCounter(rdb, ledger(b), redisseq.CounterOptions{Prefix: "bench:"}))
		parallel(b, func() error { _, err := c.Next(ctx, "counter"); return err })
	})
	b.Run("CounterNextN100", func(b *testing.B) {
		c := must(redisseq.NewCounter(rdb, ledger(b), redisseq.CounterOptions{Prefix: "bench:"}))
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			buf := make([]int64, 0, 100)
			used := 0
			for pb.Next() {
				if used == len(buf) {
					var err error
					if buf, err = c.NextN(ctx, "batch", buf[:0], 100); err != nil {
						b.Error(err)
						return
					}
					used = 0
				}
				used++
			}
		})
	})
	// The same comparison with the two interleaved in every goroutine, so
	// that both see the same machine load: each op is one INCR and one
	// Counter.Next, timed separately. throughput-ratio is Counter's
	// throughput over INCR's at equal concurrency (mean INCR latency over
	// mean Counter latency).
	// One ledger for every run of the benchmark: a Redis refuses ranges
	// of a ledger other than the one it recorded.
	interleaved := sequence.NewMemoryAllocator()
	b.Run("Counter-vs-INCR", func(b *testing.B) {
		c := must(redisseq.NewCounter(rdb, interleaved, redisseq.CounterOptions{Prefix: "bench:"}))
		var incrNs, counterNs atomic.Int64
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			var di, dc time.Duration
			for pb.Next() {
				t0 := time.Now()
				if err := rdb.Incr(ctx, "bench:interleaved").Err(); err != nil {
					b.Error(err)
					return
				}
				t1 := time.Now()
				if _, err := c.Next(ctx, "interleaved"); err != nil {
					b.Error(err)
					return
				}
				di, dc = di+t1.Sub(t0), dc+time.Since(t1)
			}
			incrNs.Add(int64(di))
			counterNs.Add(int64(dc))
		})
		b.ReportMetric(float64(incrNs.Load())/float64(b.N), "latency-ns/INCR")
		b.ReportMetric(float64(counterNs.Load())/float64(b.N), "latency-ns/Counter")
		b.ReportMetric(float64(incrNs.Load())/float64(counterNs.Load()), "throughput-ratio")
	})
}

// BenchmarkStrictVsINCR compares the strict Counter, whose concurrent
// calls are coalesced into one round trip, with one INCR per number, at 1,
// 16 and 64 concurrent callers on one server, side by side in one run.
func BenchmarkStrictVsINCR(b *testing.B) {
	ctx := context.Background()
	rdb := redistest.Start(b).Client(b)
	c := must(redisseq.NewCounter(rdb, sequence.NewMemoryAllocator(), redisseq.CounterOptions{Prefix: "strict:"}))
	for _, callers := range []int{1, 16, 64} {
		per := max(1, callers/runtime.GOMAXPROCS(0))
		run := func(b *testing.B, next func() error) {
			b.SetParallelism(per)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := next(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		b.Run(fmt.Sprintf("callers=%d/INCR", callers), func(b *testing.B) {
			run(b, func() error { return rdb.Incr(ctx, "strict:incr").Err() })
		})
		b.Run(fmt.Sprintf("callers=%d/Counter", callers), func(b *testing.B) {
			run(b, func() error { _, err := c.Next(ctx, "k"); return err })
		})
		b.Run(fmt.Sprintf("callers=%d/Counter-uncoalesced", callers), func(b *testing.B) {
			run(b, func() error { _, err := c.NextN(ctx, "u", nil, 1); return err })
		})
	}
}

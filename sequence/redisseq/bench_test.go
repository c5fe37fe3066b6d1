package redisseq_test

import (
	"context"
	"testing"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

// BenchmarkRedis compares, against one redis-server and at the same
// concurrency (RunParallel with 8 goroutines per CPU), a plain INCR per
// number with the ways this package issues numbers. Every sub-benchmark
// reports the cost of one number.
func BenchmarkRedis(b *testing.B) {
	srv := redistest.StartServer(b)
	rdb := srv.Client(b)
	ctx := context.Background()
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
		seg := sequence.NewSegment(redisseq.NewAllocator(rdb, &redisseq.AllocatorOptions{Prefix: "bench:"}),
			sequence.SegmentOptions{Step: 1000, MaxStep: 1000})
		defer seg.Close()
		parallel(b, func() error { _, err := seg.Next(ctx, "segment"); return err })
	})
	b.Run("Counter", func(b *testing.B) {
		c := redisseq.NewCounter(rdb, sequence.NewMemoryAllocator(), &redisseq.CounterOptions{Prefix: "bench:"})
		parallel(b, func() error { _, err := c.Next(ctx, "counter"); return err })
	})
	b.Run("CounterNextN100", func(b *testing.B) {
		c := redisseq.NewCounter(rdb, sequence.NewMemoryAllocator(), &redisseq.CounterOptions{Prefix: "bench:"})
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			buf := make([]int64, 0, 100)
			for pb.Next() {
				if len(buf) == 0 {
					var err error
					if buf, err = c.NextN(ctx, "batch", buf, 100); err != nil {
						b.Error(err)
						return
					}
				}
				buf = buf[1:]
			}
		})
	})
}

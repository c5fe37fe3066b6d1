package boltseq

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkAllocateBatch compares bbolt's two ways to run the read-write
// transaction under Allocate, with 1 and 16 goroutines calling. Update
// commits (and fsyncs) each call on its own; Batch gathers concurrent calls
// into one commit but makes each caller wait up to DB.MaxBatchDelay (10ms)
// for company, so it loses badly with a lone caller, which is how a Segment
// calls its Allocator. Store uses Update.
func BenchmarkAllocateBatch(b *testing.B) {
	for _, mode := range []string{"Update", "Batch"} {
		for _, goroutines := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", mode, goroutines), func(b *testing.B) {
				s, err := Open(filepath.Join(b.TempDir(), "sn.db"), Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				if mode == "Batch" {
					s.write = s.db.Batch
				}
				ctx := context.Background()
				var calls atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				for range goroutines {
					wg.Go(func() {
						for calls.Add(1) <= int64(b.N) {
							if _, err := s.Allocate(ctx, "bench", 1000); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "allocations/s")
			})
		}
	}
}

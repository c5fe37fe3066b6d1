package sequence_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
)

var sink atomic.Int64

// nextFuncs returns the contenders of BenchmarkNext, each a warm source of
// numbers. The bare atomic add is the bound the others are measured against.
func nextFuncs(b *testing.B) []struct {
	name string
	next func(ctx context.Context) (int64, error)
} {
	var counter atomic.Int64
	seg := must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{}))
	b.Cleanup(func() { seg.Close() })
	mem := sequence.NewMemory()
	h := seg.Bind("bound")
	for _, key := range []string{"bound", "unbound"} {
		if _, err := seg.Next(context.Background(), key); err != nil {
			b.Fatal(err)
		}
	}
	return []struct {
		name string
		next func(ctx context.Context) (int64, error)
	}{
		{"atomic", func(context.Context) (int64, error) { return counter.Add(1), nil }},
		{"segment-bound", h.Next},
		{"segment-unbound", func(ctx context.Context) (int64, error) { return seg.Next(ctx, "unbound") }},
		{"memory", func(ctx context.Context) (int64, error) { return mem.Next(ctx, "memory") }},
	}
}

// BenchmarkNext compares one goroutine taking numbers from a bare atomic
// counter, a warm Segment Handle, Segment.Next with its key lookup, and
// Memory.
func BenchmarkNext(b *testing.B) {
	for _, f := range nextFuncs(b) {
		b.Run(f.name, func(b *testing.B) {
			ctx := context.Background()
			var sum int64
			for b.Loop() {
				n, err := f.next(ctx)
				if err != nil {
					b.Fatal(err)
				}
				sum += n
			}
			sink.Add(sum)
		})
	}
}

// BenchmarkNextParallel is BenchmarkNext with GOMAXPROCS goroutines on one
// key.
func BenchmarkNextParallel(b *testing.B) {
	for _, f := range nextFuncs(b) {
		b.Run(f.name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				var sum int64
				for pb.Next() {
					n, err := f.next(ctx)
					if err != nil {
						b.Error(err)
						return
					}
					sum += n
				}
				sink.Add(sum)
			})
		})
	}
}

// BenchmarkNextLatency times every Next of a Segment over an allocator that
// sleeps 2ms per call. The key starts at Step 1000, so the warm-up crosses
// many block boundaries while the step adapts; after it, no caller should
// wait for the allocator at a block boundary. It reports the p50, p99.9 and
// max latency of Next, the waits and fetches during the timed part, and the
// slowest allocator call (which shows how noisy the machine's timers are).
func BenchmarkNextLatency(b *testing.B) {
	// adaptive: the step grows to its maximum (1e6), so the timed part
	// crosses few boundaries. capped: MaxStep 100000, a block lasts about
	// 8ms at this rate, so the timed part crosses about a hundred block
	// boundaries, each prefetched behind a 2ms allocator call.
	b.Run("adaptive", func(b *testing.B) { benchLatency(b, sequence.SegmentOptions{Step: 1000}) })
	b.Run("capped", func(b *testing.B) { benchLatency(b, sequence.SegmentOptions{Step: 1000, MaxStep: 100_000}) })
}

func benchLatency(b *testing.B, opts sequence.SegmentOptions) {
	a := newFaultAlloc()
	a.delay = 2 * time.Millisecond
	s := must(sequence.NewSegment(a, opts))
	b.Cleanup(func() { s.Close() })
	ctx := context.Background()
	h := s.Bind("k")
	maxStep := opts.MaxStep
	if maxStep == 0 {
		maxStep = 1_000_000
	}

	// Warm-up: until the step stops growing, plus two blocks at that size.
	for {
		if _, err := h.Next(ctx); err != nil {
			b.Fatal(err)
		}
		if ks, _ := s.KeyStats("k"); ks.Step == maxStep {
			break
		}
	}
	for range 2 * maxStep {
		if _, err := h.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}

	hist := new(latencies)
	before := s.Stats()
	a.resetSlowest()
	for b.Loop() {
		start := time.Now()
		_, err := h.Next(ctx)
		hist.add(time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
	}
	after := s.Stats()
	b.ReportMetric(float64(hist.quantile(0.5)), "p50-ns")
	b.ReportMetric(float64(hist.quantile(0.999)), "p99.9-ns")
	b.ReportMetric(float64(hist.max), "max-ns")
	b.ReportMetric(float64(after.Waits-before.Waits), "waits")
	b.ReportMetric(float64(after.Fetches-before.Fetches), "fetches")
	b.ReportMetric(float64(a.slowest())/1e6, "alloc-max-ms")
}

// latencies is an exact histogram of durations: one bucket per nanosecond
// up to 64µs, and the rare longer ones kept in a list.
type latencies struct {
	buckets [1 << 16]int64
	long    []int64
	n       int64
	max     int64
}

func (l *latencies) add(d time.Duration) {
	ns := int64(d)
	l.n++
	l.max = max(l.max, ns)
	if ns < int64(len(l.buckets)) {
		l.buckets[ns]++
		return
	}
	l.long = append(l.long, ns)
}

// quantile returns the smallest duration in ns that at least q of the
// samples do not exceed.
func (l *latencies) quantile(q float64) int64 {
	rank := int64(q * float64(l.n))
	var seen int64
	for ns, c := range l.buckets {
		if seen += c; seen > rank {
			return int64(ns)
		}
	}
	slices.Sort(l.long)
	if i := rank - seen; i < int64(len(l.long)) {
		return l.long[i]
	}
	return l.max
}

// BenchmarkNextManyKeys is Segment.Next on every CPU, each caller cycling
// through 1,000 keys (a key per customer): a lookup per call, and nothing
// written that other CPUs read.
func BenchmarkNextManyKeys(b *testing.B) {
	seg := must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{Step: 1 << 20}))
	b.Cleanup(func() { seg.Close() })
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("customer-%06d", i)
		if _, err := seg.Next(context.Background(), keys[i]); err != nil {
			b.Fatal(err)
		}
	}
	var off atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		i := int(off.Add(500))
		ctx := context.Background()
		for pb.Next() {
			i++
			if _, err := seg.Next(ctx, keys[i%len(keys)]); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkJournal compares Next through a Segment over a store that
// journals every block (the MemoryAllocator) with one over a store that
// keeps no journal, beside a bare atomic add, with the Segment's
// adaptive blocks and with fixed blocks of 100 (a journal record every
// 100 numbers): one record per block must not show on the fast path.
func BenchmarkJournal(b *testing.B) {
	ctx := context.Background()
	b.Run("atomic", func(b *testing.B) {
		var n atomic.Int64
		for b.Loop() {
			n.Add(1)
		}
		sink.Add(n.Load())
	})
	for _, step := range []string{"adaptive", "fixed-100"} {
		opts := sequence.SegmentOptions{}
		if step == "fixed-100" {
			opts = sequence.SegmentOptions{MinStep: 100, Step: 100, MaxStep: 100}
		}
		for _, store := range []struct {
			name string
			a    sequence.Allocator
		}{
			{"journal", sequence.NewMemoryAllocator()},
			{"no-journal", &plainAllocator{last: map[string]int64{}}},
		} {
			b.Run(step+"/"+store.name, func(b *testing.B) {
				seg := must(sequence.NewSegment(store.a, opts))
				defer seg.Close()
				var sum int64
				for b.Loop() {
					n, err := seg.Next(ctx, "k")
					if err != nil {
						b.Fatal(err)
					}
					sum += n
				}
				sink.Add(sum)
			})
		}
	}
}

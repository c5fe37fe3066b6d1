package sequence_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sequencetest"
)

func mustQueued(t testing.TB, g sequence.Gen, opts sequence.QueuedOptions) *sequence.Queued {
	t.Helper()
	q, err := sequence.NewQueued(g, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

func TestQueuedConformance(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		sequencetest.Run(t, func(t *testing.T) sequence.Gen {
			q, err := sequence.NewQueued(sequence.NewMemory(), sequence.QueuedOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return q
		})
	})
	t.Run("slow batches", func(t *testing.T) {
		sequencetest.Run(t, func(t *testing.T) sequence.Gen {
			q, err := sequence.NewQueued(newSlowGen(200*time.Microsecond), sequence.QueuedOptions{Min: 4, Max: 64})
			if err != nil {
				t.Fatal(err)
			}
			return q
		})
	})
}

// slowGen is a Gen and Batcher over Memory that takes delay per call, and
// fails while fail is set.
type slowGen struct {
	m     *sequence.Memory
	delay time.Duration
	fail  atomic.Bool
	calls atomic.Int64
	asked atomic.Int64 // numbers asked for
}

func newSlowGen(delay time.Duration) *slowGen {
	return &slowGen{m: sequence.NewMemory(), delay: delay}
}

func (g *slowGen) wait(ctx context.Context) error {
	g.calls.Add(1)
	select {
	case <-time.After(g.delay):
	case <-ctx.Done():
		return ctx.Err()
	}
	if g.fail.Load() {
		return errFlaky
	}
	return nil
}

func (g *slowGen) Next(ctx context.Context, key string) (int64, error) {
	if err := g.wait(ctx); err != nil {
		return 0, err
	}
	g.asked.Add(1)
	return g.m.Next(ctx, key)
}

func (g *slowGen) NextN(ctx context.Context, key string, dst []int64, n int) ([]int64, error) {
	if err := g.wait(ctx); err != nil {
		return dst, err
	}
	g.asked.Add(int64(n))
	return g.m.NextN(ctx, key, dst, n)
}

func (g *slowGen) Floor(ctx context.Context, key string, floor int64) error {
	return g.m.Floor(ctx, key, floor)
}

// 8 goroutines over a Gen that takes 1ms per batch: every number is unique,
// each goroutine's numbers increase, and at a steady rate most calls find
// the queue full (the Gen is called far less often than once per number).
func TestQueuedRefills(t *testing.T) {
	g := newSlowGen(time.Millisecond)
	q := mustQueued(t, g, sequence.QueuedOptions{})
	ctx := context.Background()
	var mu sync.Mutex
	seen := make(map[int64]bool)
	repeats, total := 0, 0
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last int64
			mine := make([]int64, 0, 20000)
			for i := range 20000 {
				n, err := q.Next(ctx, "order")
				if err != nil {
					t.Errorf("worker %d call %d: %v", w, i, err)
					return
				}
				if n <= last {
					t.Errorf("worker %d: %d after %d", w, n, last)
					return
				}
				last = n
				mine = append(mine, n)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, n := range mine {
				if seen[n] {
					repeats++
				}
				seen[n] = true
				total++
			}
		}()
	}
	wg.Wait()
	if repeats != 0 {
		t.Errorf("%d repeats in %d numbers", repeats, total)
	}
	if calls := g.calls.Load(); calls*20 > int64(total) {
		t.Errorf("the Gen was called %d times for %d numbers: the queue is not sized by the rate", calls, total)
	}
	t.Logf("%d numbers, %d Gen calls, %d drawn", total, g.calls.Load(), g.asked.Load())
}

// A failing Gen: callers get its error once the queue is empty, and
// numbers flow again when it recovers; a Floor drops queued numbers below
// it.
func TestQueuedFailuresAndFloor(t *testing.T) {
	g := newSlowGen(100 * time.Microsecond)
	q := mustQueued(t, g, sequence.QueuedOptions{Min: 8, Max: 8})
	ctx := context.Background()
	first, err := q.Next(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	g.fail.Store(true)
	var got error
	for range 100 {
		if _, got = q.Next(ctx, "k"); got != nil {
			break
		}
	}
	if !errors.Is(got, errFlaky) {
		t.Fatalf("a Gen failing with the queue empty: %v; want its error", got)
	}
	g.fail.Store(false)
	n, err := q.Next(ctx, "k")
	if err != nil || n <= first {
		t.Fatalf("after the Gen recovered: %d, %v", n, err)
	}
	if err := q.Floor(ctx, "k", 1000); err != nil {
		t.Fatal(err)
	}
	if n, err := q.Next(ctx, "k"); err != nil || n <= 1000 {
		t.Errorf("Next after Floor(1000) = %d, %v; want above 1000", n, err)
	}

	if err := mustQueued(t, onlyNext{sequence.NewMemory()}, sequence.QueuedOptions{}).Floor(ctx, "k", 5); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Floor over a Gen that cannot take one: %v; want ErrUnsupported", err)
	}
	for _, opts := range []sequence.QueuedOptions{{Min: 10, Max: 5}, {Lead: -1}, {Max: -3}} {
		if _, err := sequence.NewQueued(sequence.NewMemory(), opts); !errors.Is(err, sequence.ErrInvalidArgument) {
			t.Errorf("NewQueued(%+v) = %v; want ErrInvalidArgument", opts, err)
		}
	}
	if _, err := sequence.NewQueued(nil, sequence.QueuedOptions{}); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("NewQueued(nil) = %v; want ErrInvalidArgument", err)
	}
}

// BenchmarkQueuedVsSegment times every Next of one caller over a store
// that takes 2ms per call: a Segment over an Allocator, and a Queued over
// a Gen that draws a batch per call. It reports p50, p99.9 and max.
func BenchmarkQueuedVsSegment(b *testing.B) {
	const delay = 2 * time.Millisecond
	run := func(b *testing.B, next func(ctx context.Context) (int64, error)) {
		ctx := context.Background()
		for range 200_000 { // warm-up: the rates and steps settle
			if _, err := next(ctx); err != nil {
				b.Fatal(err)
			}
		}
		hist := new(latencies)
		for b.Loop() {
			start := time.Now()
			_, err := next(ctx)
			hist.add(time.Since(start))
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(hist.quantile(0.5)), "p50-ns")
		b.ReportMetric(float64(hist.quantile(0.999)), "p99.9-ns")
		b.ReportMetric(float64(hist.max), "max-ns")
	}
	for range 3 {
		b.Run("segment", func(b *testing.B) {
			a := newFaultAlloc()
			a.delay = delay
			s := must(sequence.NewSegment(a, sequence.SegmentOptions{}))
			b.Cleanup(func() { s.Close() })
			run(b, func(ctx context.Context) (int64, error) { return s.Next(ctx, "k") })
		})
		b.Run("queued", func(b *testing.B) {
			q := mustQueued(b, newSlowGen(delay), sequence.QueuedOptions{})
			run(b, func(ctx context.Context) (int64, error) { return q.Next(ctx, "k") })
		})
	}
}

// 10,000 keys used once are dropped once idle, and each then continues
// above its last number; a key in use all along keeps increasing.
func TestQueuedIdleRelease(t *testing.T) {
	g := newSlowGen(0)
	q := mustQueued(t, g, sequence.QueuedOptions{Idle: 40 * time.Millisecond, Min: 4})
	ctx := context.Background()
	last := make(map[string]int64)
	for i := range 10_000 {
		key := fmt.Sprintf("customer-%05d", i)
		n, err := q.Next(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		last[key] = n
	}
	var busyLast int64
	deadline := time.Now().Add(10 * time.Second)
	for sequence.QueuedKeys(q) > 1 {
		n, err := q.Next(ctx, "busy")
		if err != nil || n <= busyLast {
			t.Fatalf("a key in use: %d after %d, %v", n, busyLast, err)
		}
		busyLast = n
		if time.Now().After(deadline) {
			t.Fatalf("%d queues left after 10s with Idle 40ms", sequence.QueuedKeys(q))
		}
		time.Sleep(time.Millisecond)
	}
	for key, n := range last {
		m, err := q.Next(ctx, key)
		if err != nil || m <= n {
			t.Fatalf("key %s after its queue was dropped: %d, %v; want above %d", key, m, err, n)
		}
	}
}

// hangGen hangs in Next while hang is set: ignoring its context when
// deaf is set, else until the context ends.
type hangGen struct {
	Gen   sequence.Gen
	hang  atomic.Bool
	deaf  bool
	freed chan struct{}
}

func (h *hangGen) Next(ctx context.Context, key string) (int64, error) {
	if h.hang.Load() {
		if h.deaf {
			<-h.freed
		} else {
			<-ctx.Done()
			return 0, ctx.Err()
		}
	}
	return h.Gen.Next(ctx, key)
}

// A refill whose call to the Gen hangs, whether the Gen honours its
// context or not, fails within FillTimeout with ErrUnavailable instead of
// wedging the key until Close; once the Gen answers again the key issues
// again, numbers a late call returned included, with no repeat. Under a
// Balanced, the other member serves meanwhile.
func TestQueuedFillTimeout(t *testing.T) {
	for _, deaf := range []bool{false, true} {
		t.Run(map[bool]string{false: "cancellable", true: "deaf"}[deaf], func(t *testing.T) {
			ctx := context.Background()
			h := &hangGen{Gen: sequence.NewMemory(), deaf: deaf, freed: make(chan struct{})}
			q, err := sequence.NewQueued(h, sequence.QueuedOptions{FillTimeout: 100 * time.Millisecond, Min: 4, Max: 4})
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			h.hang.Store(true)
			long, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			start := time.Now()
			if _, err := q.Next(long, "k"); !errors.Is(err, sequence.ErrUnavailable) {
				t.Fatalf("a refill that hangs: %v; want ErrUnavailable", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("the refill failed after %v; want about FillTimeout", d)
			}
			b := mustBalanced(t, []sequence.Gen{q, sequence.NewMemory()}, sequence.BalancedOptions{})
			for range 10 {
				if _, err := b.Next(long, "k"); err != nil {
					t.Fatalf("a Balanced over the hanging Queued: %v", err)
				}
			}
			h.hang.Store(false)
			if deaf {
				close(h.freed)
			}
			seen := map[int64]bool{}
			for range 50 {
				n, err := q.Next(long, "k")
				for try := 0; try < 10 && errors.Is(err, sequence.ErrUnavailable); try++ { // a fill started while hanging
					n, err = q.Next(long, "k")
				}
				if err != nil {
					t.Fatal(err)
				}
				if seen[n] {
					t.Fatalf("%d twice", n)
				}
				seen[n] = true
			}
		})
	}
}

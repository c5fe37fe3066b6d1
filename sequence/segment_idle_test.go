package sequence_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn/internal/testserver"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
)

// heapAfterGC returns the bytes of live heap objects.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A Segment holding 100,000 keys used once each (a key per customer) costs
// at most 150 bytes per key, the key's own string included.
func TestSegmentMemoryPerKey(t *testing.T) {
	const n = 100_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("customer-%06d", i)
	}
	// The allocator is the store, not the Segment: fill it first, with
	// every key; it keeps no journal, which grows with every block.
	a := &plainAllocator{last: map[string]int64{}}
	s := must(sequence.NewSegment(a, sequence.SegmentOptions{Idle: -1}))
	defer s.Close()
	ctx := context.Background()
	for _, k := range append(keys, "warm") {
		if _, err := a.Allocate(ctx, k, 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Next(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	before := heapAfterGC()
	for _, k := range keys {
		if _, err := s.Next(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	after := heapAfterGC()
	runtime.KeepAlive(s)
	runtime.KeepAlive(keys)
	per := float64(after-before) / n
	if per > 150 {
		t.Errorf("%.0f bytes per key, want at most 150", per)
	}
	t.Logf("%.0f bytes per key", per)
}

// 20,000 keys of a Segment over the memory allocator, and 2,000 over a
// bbolt file, each used once, are all released once idle; each continues
// above its last number, with no number issued twice. (Each key costs a
// fetch and its journal's Released and Closed records: under -race, a
// few milliseconds on a busy machine, so 100,000 would take minutes.
// TestSegmentMemoryPerKey measures the footprint of many more.)
// Meanwhile other goroutines use a few keys now and then, around the idle
// time, so that releases race with their calls.
func TestSegmentReleasesIdleKeys(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testReleasesIdleKeys(t, sequence.NewMemoryAllocator(), 20_000) })
	t.Run("bolt", func(t *testing.T) {
		store, err := boltseq.Open(filepath.Join(testserver.BaseDir(), fmt.Sprintf("sn-idle-%d.db", os.Getpid())), boltseq.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close(); os.Remove(store.Path()) })
		testReleasesIdleKeys(t, store, 2_000)
	})
}

func testReleasesIdleKeys(t *testing.T, store sequence.Allocator, n int) {
	const idle = 200 * time.Millisecond
	s := must(sequence.NewSegment(store, sequence.SegmentOptions{Step: 10, Idle: idle}))
	defer s.Close()
	ctx := context.Background()

	// The churn: 4 goroutines on 20 keys, each call after a pause of up to
	// twice the idle time.
	stop := make(chan struct{})
	var churn sync.WaitGroup
	churned := make([][]int64, 20)
	var mu sync.Mutex
	for g := range 4 {
		churn.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(g), 1))
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Duration(rnd.Int64N(int64(2 * idle)))):
				}
				k := rnd.IntN(len(churned))
				n, err := s.Next(ctx, fmt.Sprintf("churn-%d", k))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				churned[k] = append(churned[k], n)
				mu.Unlock()
			}
		})
	}

	// eachKey calls f with the number Next gives each customer key, on 8
	// goroutines.
	eachKey := func(f func(i int, v int64) bool) {
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := g; i < n; i += 8 {
					v, err := s.Next(ctx, fmt.Sprintf("customer-%06d", i))
					if err != nil {
						t.Error(err)
						return
					}
					if !f(i, v) {
						return
					}
				}
			})
		}
		wg.Wait()
	}
	first := make([]int64, n)
	eachKey(func(i int, v int64) bool { first[i] = v; return true })
	if t.Failed() {
		close(stop)
		churn.Wait()
		return
	}
	// Every customer key goes within 1.25 idle times of its last use.
	held := func() (held int) {
		for i := range n {
			if _, ok := s.KeyStats(fmt.Sprintf("customer-%06d", i)); ok {
				held++
			}
		}
		return held
	}
	deadline := time.Now().Add(30 * time.Second)
	for h := held(); h > 0; h = held() {
		if time.Now().After(deadline) {
			t.Fatalf("after 30s, %d of %d keys still held; %+v", h, n, s.Stats())
		}
		time.Sleep(idle / 4)
	}
	if st := s.Stats(); st.Released < int64(n) || st.Keys > int64(len(churned)) {
		t.Errorf("after release: %+v; want at least %d released and at most %d held", st, n, len(churned))
	}
	t.Logf("after release: %+v", s.Stats())

	// Each continues above its last number.
	eachKey(func(i int, v int64) bool {
		if v <= first[i] {
			t.Errorf("customer-%06d: %d after %d", i, v, first[i])
			return false
		}
		return true
	})
	close(stop)
	churn.Wait()
	total := 0
	for k, nums := range churned {
		total += len(nums)
		sorted := slices.Clone(nums)
		slices.Sort(sorted)
		if len(slices.Compact(sorted)) != len(nums) {
			t.Errorf("churn-%d: a number issued twice in %v", k, nums)
		}
	}
	t.Logf("churn: %d numbers on %d keys, no repeat; %+v", total, len(churned), s.Stats())
}

// Release drops one key now, like the idle time; a bound key stays.
func TestSegmentRelease(t *testing.T) {
	ctx := context.Background()
	s := must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{Step: 10, Idle: -1}))
	defer s.Close()
	a, _ := s.Next(ctx, "a")
	h := s.Bind("b")
	b, _ := h.Next(ctx)
	s.Release("a")
	s.Release("b")
	s.Release("never seen")
	if _, ok := s.KeyStats("a"); ok {
		t.Error("a released key still has state")
	}
	if _, ok := s.KeyStats("b"); !ok {
		t.Error("a bound key was released")
	}
	if n, err := s.Next(ctx, "a"); err != nil || n <= a {
		t.Errorf("after Release: %d, %v; want above %d", n, err, a)
	}
	if n, err := h.Next(ctx); err != nil || n != b+1 {
		t.Errorf("the bound key after Release: %d, %v; want %d", n, err, b+1)
	}
	if st := s.Stats(); st.Released != 1 || st.Keys != 2 {
		t.Errorf("Stats = %+v; want 1 released, 2 held", st)
	}
}

// lossyAlloc loses its data once (a failover): after `lose` it starts again at 1.
type lossyAlloc struct {
	mu   sync.Mutex
	last int64
}

func (a *lossyAlloc) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := sequence.Range{First: a.last + 1, Last: a.last + n}
	a.last += n
	return r, nil
}
func (a *lossyAlloc) lose() { a.mu.Lock(); a.last = 0; a.mu.Unlock() }

// Found by an adversarial review, now fixed: a key whose store went
// backwards (ErrRegressed) was released, and its new state, knowing nothing
// of the numbers issued, took the store's low blocks: repeats. A key whose
// last fetch failed is never released.
func TestSegmentReleaseKeepsRegressed(t *testing.T) {
	ctx := context.Background()
	a := &lossyAlloc{}
	s := must(sequence.NewSegment(a, sequence.SegmentOptions{Step: 10, MaxStep: 10, Idle: -1}))
	defer s.Close()
	seen := map[int64]bool{}
	for range 50 {
		n, err := s.Next(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		seen[n] = true
	}
	a.lose()
	// drain what is buffered; then the Segment must refuse the regressed block
	var regressed bool
	for range 30 {
		n, err := s.Next(ctx, "k")
		if errors.Is(err, sequence.ErrRegressed) {
			regressed = true
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if seen[n] {
			t.Fatalf("repeat %d before release", n)
		}
		seen[n] = true
	}
	t.Logf("regressed detected before release: %v", regressed)
	st, _ := s.KeyStats("k")
	t.Logf("before release: %+v seen=%d", st, len(seen))
	s.Release("k")
	reps := 0
	for range 30 {
		n, err := s.Next(ctx, "k")
		if err != nil {
			t.Logf("after release: %v", err)
			break
		}
		if seen[n] {
			reps++
		}
		seen[n] = true
	}
	if reps > 0 {
		t.Errorf("after Release: %d repeated numbers (the Segment had reported ErrRegressed for this key)", reps)
	}
}

// The same with the idle sweeper, while callers keep calling the key and
// getting ErrRegressed (its position never moves).
func TestSegmentIdleKeepsRegressed(t *testing.T) {
	ctx := context.Background()
	a := &lossyAlloc{}
	s := must(sequence.NewSegment(a, sequence.SegmentOptions{Step: 10, MaxStep: 10, Idle: 20 * time.Millisecond}))
	defer s.Close()
	seen := map[int64]bool{}
	for range 200 {
		n, _ := s.Next(ctx, "k")
		seen[n] = true
	}
	a.lose()
	errs, reps := 0, 0
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		n, err := s.Next(ctx, "k")
		if err != nil {
			errs++
			time.Sleep(100 * time.Microsecond)
			continue
		}
		if seen[n] {
			reps++
			if reps == 1 {
				t.Logf("first repeat %d after %d ErrRegressed errors", n, errs)
			}
		}
		seen[n] = true
	}
	if reps > 0 {
		t.Errorf("%d repeats while the caller kept calling the regressed key (errors %d, released %d)", reps, errs, s.Stats().Released)
	}
}

// plainAllocator is an Allocator with counters in a map and nothing
// more: no journal.
type plainAllocator struct {
	mu   sync.Mutex
	last map[string]int64
}

func (a *plainAllocator) Allocate(_ context.Context, key string, n int64) (sequence.Range, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	last := a.last[key]
	a.last[key] = last + n
	return sequence.Range{First: last + 1, Last: last + n}, nil
}

package sequence_test

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sngen/sn/sequence"
)

// faultAlloc wraps a MemoryAllocator and injects the faults Segment must
// survive: slowness, failures, a store that loses its data, a call that
// blocks until the test releases it. It counts calls in flight per key.
type faultAlloc struct {
	delay time.Duration // every call sleeps this long (or until ctx is done)

	mu          sync.Mutex
	inner       *sequence.MemoryAllocator
	fail        error         // while non-nil, calls return it
	gate        chan struct{} // while non-nil, calls block on it after reserving
	entered     chan int64    // receives n of each call that blocks on gate
	ns          []int64       // n of every call, in order
	inflight    map[string]int
	maxInflight int
	ctxErrs     []error // ctx.Err() of calls that ended because of ctx

	active atomic.Int64 // calls running now
	slow   atomic.Int64 // longest call in ns since resetSlowest
}

func newFaultAlloc() *faultAlloc {
	return &faultAlloc{inner: sequence.NewMemoryAllocator(), inflight: make(map[string]int), entered: make(chan int64, 64)}
}

func (a *faultAlloc) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	a.active.Add(1)
	defer a.active.Add(-1)
	start := time.Now()
	defer func() {
		d := int64(time.Since(start))
		for s := a.slow.Load(); d > s && !a.slow.CompareAndSwap(s, d); s = a.slow.Load() {
		}
	}()
	a.mu.Lock()
	a.ns = append(a.ns, n)
	a.inflight[key]++
	a.maxInflight = max(a.maxInflight, a.inflight[key])
	inner, fail, gate := a.inner, a.fail, a.gate
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.inflight[key]--
		a.mu.Unlock()
	}()

	if a.delay > 0 {
		t := time.NewTimer(a.delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return sequence.Range{}, a.ctxDone(ctx)
		}
	}
	if fail != nil {
		return sequence.Range{}, fail
	}
	r, err := inner.Allocate(ctx, key, n)
	if err != nil || gate == nil {
		return r, err
	}
	a.entered <- n
	select {
	case <-gate:
		return r, nil
	case <-ctx.Done():
		return sequence.Range{}, a.ctxDone(ctx)
	}
}

func (a *faultAlloc) ctxDone(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ctxErrs = append(a.ctxErrs, ctx.Err())
	return ctx.Err()
}

func (a *faultAlloc) Floor(ctx context.Context, key string, floor int64) error {
	a.mu.Lock()
	inner := a.inner
	a.mu.Unlock()
	return inner.Floor(ctx, key, floor)
}

func (a *faultAlloc) resetSlowest()          { a.slow.Store(0) }
func (a *faultAlloc) slowest() time.Duration { return time.Duration(a.slow.Load()) }

// setFail makes later calls fail with err (nil: succeed again).
func (a *faultAlloc) setFail(err error) {
	a.mu.Lock()
	a.fail = err
	a.mu.Unlock()
}

// hold makes later calls block after reserving their range until release.
func (a *faultAlloc) hold() {
	a.mu.Lock()
	a.gate = make(chan struct{})
	a.mu.Unlock()
}

// release unblocks held calls and stops holding new ones.
func (a *faultAlloc) release() {
	a.mu.Lock()
	close(a.gate)
	a.gate = nil
	a.mu.Unlock()
}

// loseData replaces the store with an empty one whose counters start above
// floor, as a Redis that lost its data and was floored too low would.
func (a *faultAlloc) loseData(floor int64, keys ...string) {
	fresh := sequence.NewMemoryAllocator()
	for _, k := range keys {
		if err := fresh.Floor(context.Background(), k, floor); err != nil {
			panic(err)
		}
	}
	a.mu.Lock()
	a.inner = fresh
	a.mu.Unlock()
}

func (a *faultAlloc) calls() []int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]int64(nil), a.ns...)
}

func (a *faultAlloc) maxConcurrent() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.maxInflight
}

// plainAlloc hides the Floorer of an Allocator.
type plainAlloc struct{ sequence.Allocator }

// funcAlloc is an Allocator made of a function.
type funcAlloc func(ctx context.Context, key string, n int64) (sequence.Range, error)

func (f funcAlloc) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	return f(ctx, key, n)
}

// fakeClock is a clock that moves only when told to.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

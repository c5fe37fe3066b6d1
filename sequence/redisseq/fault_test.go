package redisseq_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

// issued is a number with the phase of the run its call belonged to.
type issued struct {
	n int64
	// endedBefore: the call returned before the fault was injected.
	// startedAfter: the call started after recovery.
	endedBefore, startedAfter bool
}

// faultRun drives workers goroutines calling g.Next on one key while the
// test injects a fault and recovers from it. Workers tolerate the errors
// that ok accepts, and stop once each has collected perWorker numbers in
// calls started after recovery.
type faultRun struct {
	t         *testing.T
	g         sequence.Gen
	key       string
	workers   int
	perWorker int
	ok        func(error) bool

	faulted, recovered atomic.Bool
	total              atomic.Int64
	maxSeen            atomic.Int64
	warm               chan struct{} // closed after 2000 numbers
	warmOnce           sync.Once

	mu      sync.Mutex
	errSeen map[error]chan struct{} // sentinel -> closed when first seen after the fault
	results [][]issued
	wg      sync.WaitGroup
}

func newFaultRun(t *testing.T, g sequence.Gen, ok func(error) bool, watch ...error) *faultRun {
	r := &faultRun{t: t, g: g, key: "k", workers: 8, perWorker: 300, ok: ok,
		warm: make(chan struct{}), errSeen: map[error]chan struct{}{}}
	for _, e := range watch {
		r.errSeen[e] = make(chan struct{})
	}
	r.results = make([][]issued, r.workers)
	return r
}

func (r *faultRun) start() {
	for w := range r.workers {
		r.wg.Go(func() { r.work(w) })
	}
}

func (r *faultRun) work(w int) {
	after := 0
	for after < r.perWorker {
		startedAfter := r.recovered.Load()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		n, err := r.g.Next(ctx, r.key)
		cancel()
		if err != nil {
			if !r.ok(err) {
				r.t.Errorf("worker %d: unexpected error: %v", w, err)
				return
			}
			if r.faulted.Load() {
				r.mu.Lock()
				for e, ch := range r.errSeen {
					if errors.Is(err, e) {
						close(ch)
						delete(r.errSeen, e)
					}
				}
				r.mu.Unlock()
			}
			continue
		}
		r.results[w] = append(r.results[w], issued{n: n, endedBefore: !r.faulted.Load(), startedAfter: startedAfter})
		for m := r.maxSeen.Load(); n > m && !r.maxSeen.CompareAndSwap(m, n); m = r.maxSeen.Load() {
		}
		if r.total.Add(1) == 2000 {
			r.warmOnce.Do(func() { close(r.warm) })
		}
		if startedAfter {
			after++
		}
	}
}

// await waits until ch is closed, failing the test after a minute.
func (r *faultRun) await(what string, ch <-chan struct{}) {
	r.t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		r.t.Fatalf("gave up waiting for %s", what)
	}
}

// seen returns the channel closed when an error wrapping e is first seen
// after the fault.
func (r *faultRun) seen(e error) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ch, ok := r.errSeen[e]; ok {
		return ch
	}
	ch := make(chan struct{})
	close(ch)
	return ch
}

// check waits for the workers and verifies: no number repeated, each
// worker's numbers increasing, and every number from a call started after
// recovery above floor.
func (r *faultRun) check(floor int64) (before, after []int64) {
	r.t.Helper()
	r.wg.Wait()
	var all []int64
	for w, res := range r.results {
		for i, is := range res {
			if i > 0 && is.n <= res[i-1].n {
				r.t.Fatalf("worker %d got %d after %d", w, is.n, res[i-1].n)
			}
			all = append(all, is.n)
			if is.endedBefore {
				before = append(before, is.n)
			}
			if is.startedAfter {
				after = append(after, is.n)
				if is.n <= floor {
					r.t.Fatalf("worker %d got %d after recovery; want above %d", w, is.n, floor)
				}
			}
		}
	}
	slices.Sort(all)
	if d := len(all) - len(slices.Compact(all)); d != 0 {
		r.t.Fatalf("%d repeated numbers among %d", d, len(all))
	}
	r.t.Logf("%d numbers: %d before the fault, %d after recovery, none repeated", len(all), len(before), len(after))
	return before, after
}

// kill -9 Redis (no persistence) while 8 goroutines issue from the strict
// Counter, and restart it empty: numbers go on above everything issued.
func TestFaultCounterKillRestart(t *testing.T) {
	srv := redistest.Start(t)
	c := must(redisseq.NewCounter(srv.Client(t), sequence.NewMemoryAllocator(), redisseq.CounterOptions{Step: 100}))
	r := newFaultRun(t, c, func(err error) bool { return errors.Is(err, sequence.ErrUnavailable) }, sequence.ErrUnavailable)
	r.start()
	r.await("2000 numbers", r.warm)
	r.faulted.Store(true)
	srv.Kill(t)
	r.await("an ErrUnavailable", r.seen(sequence.ErrUnavailable))
	srv.Restart(t)
	r.recovered.Store(true)
	before, after := r.check(0)
	if top := slices.Max(before); slices.Min(after) <= top {
		t.Fatalf("after the restart the Counter issued %d, not above %d issued before the crash", slices.Min(after), top)
	}
}

// kill -9 Redis (no persistence) while 8 goroutines issue from a Segment
// over the Redis Allocator in front of a ledger, and restart it empty. The
// next blocks come from the ledger, above everything issued: callers see
// ErrUnavailable while Redis is down, then numbers again, never a repeat.
func TestFaultSegmentKillRestart(t *testing.T) {
	srv := redistest.Start(t)
	ledger := sequence.NewMemoryAllocator()
	seg := must(sequence.NewSegment(must(redisseq.NewAllocator(srv.Client(t), ledger, redisseq.AllocatorOptions{Chunk: 1000})), sequence.SegmentOptions{Step: 100, MaxStep: 100}))
	defer seg.Close()
	ok := func(err error) bool {
		return errors.Is(err, sequence.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
	}
	r := newFaultRun(t, seg, ok, sequence.ErrUnavailable)
	r.start()
	r.await("2000 numbers", r.warm)
	r.faulted.Store(true)
	srv.Kill(t)
	r.await("an ErrUnavailable", r.seen(sequence.ErrUnavailable))
	srv.Restart(t)
	top := r.maxSeen.Load()
	r.recovered.Store(true)
	r.check(top)
}

// Without a ledger, an Allocator refuses a Redis that does not fsync every
// write, and refuses to go on once the Redis it used comes back empty.
func TestFaultRedisOnly(t *testing.T) {
	ctx := context.Background()
	loose := redistest.Start(t).Client(t)
	if _, err := must(redisseq.NewRedisOnlyAllocator(loose, redisseq.AllocatorOptions{})).Allocate(ctx, "k", 1); !errors.Is(err, redisseq.ErrUnsafe) {
		t.Fatalf("Redis without appendfsync always: %v", err)
	}
	srv := redistest.Start(t, redistest.Persistent())
	rdb := srv.Client(t)
	a := must(redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{}))
	if _, err := a.Allocate(ctx, "k", 5); err != nil {
		t.Fatal(err)
	}
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Allocate(ctx, "k", 1); !errors.Is(err, sequence.ErrRegressed) {
		t.Fatalf("after FLUSHALL: %v", err)
	}
}

// While Redis is down a Segment keeps serving the numbers it holds, then
// fails with ErrUnavailable; when Redis comes back (with its data) it
// resumes by itself.
func TestFaultSegmentServesBufferWhileDown(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	seg := must(sequence.NewSegment(must(redisseq.NewRedisOnlyAllocator(srv.Client(t), redisseq.AllocatorOptions{})), sequence.SegmentOptions{Step: 1000, MaxStep: 1000}))
	defer seg.Close()
	var got []int64
	next := func(timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		n, err := seg.Next(ctx, "k")
		if err == nil {
			got = append(got, n)
		}
		return err
	}
	if err := next(time.Second); err != nil {
		t.Fatal(err)
	}
	srv.Kill(t)
	// The rest of the first block [1, 1000] is in memory.
	for range 999 {
		if err := next(time.Second); err != nil {
			t.Fatalf("Next with Redis down after %d numbers: %v; want the buffered block", len(got), err)
		}
	}
	var err error
	for range 100 {
		if err = next(200 * time.Millisecond); err == nil {
			t.Fatalf("Next with Redis down returned %d beyond the buffered block", got[len(got)-1])
		}
		if errors.Is(err, sequence.ErrUnavailable) {
			break
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Next with Redis down and the buffer spent: %v", err)
		}
	}
	if !errors.Is(err, sequence.ErrUnavailable) {
		t.Fatalf("Next with Redis down and the buffer spent: %v; want ErrUnavailable", err)
	}

	srv.Restart(t)
	// Poll: the Segment fails at once during its retry backoff (at most 1s).
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		err := next(time.Second)
		if err == nil {
			break
		}
		if !errors.Is(err, sequence.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Next after restart: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Segment did not resume after Redis came back: %v", err)
		}
	}
	for range 100 {
		if err := next(time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Fatal("numbers repeated or out of order")
	}
	if got[1000] <= 1000 {
		t.Fatalf("first number after restart = %d, want above the first block", got[1000])
	}
}

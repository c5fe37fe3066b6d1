package sequence_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// flakyNotes is a MemoryAllocator whose Note fails once for a Released
// record, as a store does on a timeout, a deadlock or a dropped connection.
type flakyNotes struct {
	*sequence.MemoryAllocator
	failed atomic.Bool
}

func (f *flakyNotes) Note(ctx context.Context, key string, e journal.Event) (journal.Event, error) {
	if e.Kind == journal.Released && f.failed.CompareAndSwap(false, true) {
		return journal.Event{}, errors.New("connection reset by peer")
	}
	return journal.Of(f.MemoryAllocator).Note(ctx, key, e)
}

// TestAdvLostReleaseThenClosed: when the Released record of a key fails
// to be written, the Segment still writes its Closed record, and Closed
// turns every Open number of the block into Issued: numbers that no one
// was given are reported issued, a silent loss.
func TestAdvLostReleaseThenClosed(t *testing.T) {
	ctx := context.Background()
	alloc := &flakyNotes{MemoryAllocator: sequence.NewMemoryAllocator()}
	seg, err := sequence.NewSegment(alloc, sequence.SegmentOptions{Step: 100, MinStep: 100, MaxStep: 100, Idle: -1})
	if err != nil {
		t.Fatal(err)
	}
	var given []int64
	for range 3 {
		n, err := seg.Next(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		given = append(given, n)
	}
	seg.Release("k") // its unused numbers 4..100 are a gap: Released, then Closed
	if err := seg.Close(); err != nil {
		t.Fatal(err)
	}
	events, head, err := journal.ReadJournal(ctx, journal.Of(alloc), "k")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		t.Logf("%v", e)
	}
	if err := journal.VerifyChain("k", events, head); err != nil {
		t.Fatal(err)
	}
	rep := journal.Audit("k", events, head, time.Now())
	for _, sp := range rep.Spans {
		t.Logf("%v %s", sp.Range, sp.State)
	}
	t.Logf("given to callers: %v; explained: %v", given, rep.Explained())
	for _, sp := range rep.Within(4, 100) {
		if sp.State == journal.Issued {
			t.Errorf("numbers %v were never given to a caller, and the audit says issued (explained=%v)", sp.Range, rep.Explained())
		}
	}
}

// advGatedAlloc reserves in the store at once, then holds the answer of the
// Allocate calls after the first until gate is closed: a fetch in flight.
type advGatedAlloc struct {
	*sequence.MemoryAllocator
	calls   atomic.Int64
	reached chan struct{}
	gate    chan struct{}
}

func (s *advGatedAlloc) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	r, err := s.MemoryAllocator.Allocate(ctx, key, n)
	if s.calls.Add(1) == 2 {
		close(s.reached)
		<-s.gate
	}
	return r, err
}

// TestAdvFloorDuringFetch: a Floor raised while a block is being fetched
// cuts the numbers of that block at or below the floor (accept), with no
// Released record: the journal keeps them Open, and the Closed record at
// Close makes them Issued. No caller was given them.
func TestAdvFloorDuringFetch(t *testing.T) {
	ctx := context.Background()
	alloc := &advGatedAlloc{MemoryAllocator: sequence.NewMemoryAllocator(), reached: make(chan struct{}), gate: make(chan struct{})}
	seg, err := sequence.NewSegment(alloc, sequence.SegmentOptions{Step: 10, MinStep: 10, MaxStep: 10, Idle: -1})
	if err != nil {
		t.Fatal(err)
	}
	given := map[int64]bool{}
	for range 9 { // past the prefetch threshold of [1, 10]: [11, 20] is fetched
		n, err := seg.Next(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		given[n] = true
	}
	<-alloc.reached // [11, 20] is reserved in the store; its answer is on its way
	if err := seg.Floor(ctx, "k", 15); err != nil {
		t.Fatal(err)
	}
	close(alloc.gate)
	for range 3 {
		n, err := seg.Next(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		given[n] = true
	}
	if err := seg.Close(); err != nil {
		t.Fatal(err)
	}
	events, head, err := journal.ReadJournal(ctx, journal.Of(alloc), "k")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		t.Logf("%v", e)
	}
	rep := journal.Audit("k", events, head, time.Now())
	t.Logf("given %v; explained %v", given, rep.Explained())
	for _, sp := range rep.Spans {
		t.Logf("%v %s", sp.Range, sp.State)
		if sp.State != journal.Issued {
			continue
		}
		for n := sp.Range.First; n <= sp.Range.Last; n++ {
			if !given[n] {
				t.Errorf("%d: never given to a caller, and the audit says issued", n)
			}
		}
	}
}

// ambiguousAlloc reserves in the store and then reports a failure, once:
// a commit whose answer was lost (etcdseq retries after AttemptTimeout, a
// connection cut during COMMIT).
type ambiguousAlloc struct {
	*sequence.MemoryAllocator
	failed atomic.Bool
}

func (a *ambiguousAlloc) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	r, err := a.MemoryAllocator.Allocate(ctx, key, n)
	if err == nil && a.failed.CompareAndSwap(false, true) {
		return sequence.Range{}, context.DeadlineExceeded
	}
	return r, err
}

// TestAdvAmbiguousAllocate: a block reserved by a Segment's fetch whose
// answer was lost is never used; the Segment's Closed record makes the
// audit call it issued.
func TestAdvAmbiguousAllocate(t *testing.T) {
	ctx := context.Background()
	alloc := &ambiguousAlloc{MemoryAllocator: sequence.NewMemoryAllocator()}
	seg, err := sequence.NewSegment(alloc, sequence.SegmentOptions{Step: 10, MinStep: 10, MaxStep: 10, Idle: -1})
	if err != nil {
		t.Fatal(err)
	}
	given := map[int64]bool{}
	for len(given) < 5 {
		n, err := seg.Next(ctx, "k")
		if err != nil {
			t.Logf("Next: %v", err)
			time.Sleep(60 * time.Millisecond)
			continue
		}
		given[n] = true
	}
	if err := seg.Close(); err != nil {
		t.Fatal(err)
	}
	events, head, _ := journal.ReadJournal(ctx, journal.Of(alloc), "k")
	for _, e := range events {
		t.Logf("%v", e)
	}
	rep := journal.Audit("k", events, head, time.Now())
	t.Logf("given %v; explained %v", given, rep.Explained())
	for _, sp := range rep.Spans {
		t.Logf("%v %s", sp.Range, sp.State)
		if sp.State == journal.Issued {
			for n := sp.Range.First; n <= sp.Range.Last; n++ {
				if !given[n] {
					t.Errorf("%d: never given to a caller, and the audit says issued", n)
				}
			}
		}
	}
}

// TestAdvSegmentsStress: two Segments over one MemoryAllocator, callers
// taking numbers while keys are released, floors raised and the
// Segments closed; every number given is unique and the audit never says
// it is unused, skipped, void or unaccounted.
func TestAdvSegmentsStress(t *testing.T) {
	ctx := context.Background()
	alloc := sequence.NewMemoryAllocator()
	var segs [2]*sequence.Segment
	for i := range segs {
		s, err := sequence.NewSegment(alloc, sequence.SegmentOptions{Step: 7, MinStep: 3, MaxStep: 50, Idle: 2 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		segs[i] = s
	}
	var mu = make(chan struct{}, 1)
	mu <- struct{}{}
	given := map[int64]int{}
	stop := make(chan struct{})
	done := make(chan struct{})
	var workers atomic.Int64
	for w := range 8 {
		workers.Add(1)
		go func() {
			defer func() {
				if workers.Add(-1) == 0 {
					close(done)
				}
			}()
			s := segs[w%2]
			for {
				select {
				case <-stop:
					return
				default:
				}
				n, err := s.Next(ctx, "k")
				if errors.Is(err, sequence.ErrClosed) {
					return
				}
				if err != nil {
					continue
				}
				<-mu
				given[n]++
				mu <- struct{}{}
			}
		}()
	}
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			segs[i%2].Release("k")
			if i%50 == 0 {
				h, _ := journal.Of(alloc).Head(ctx, "k")
				_ = segs[i%2].Floor(ctx, "k", h.Mark+3)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	time.Sleep(300 * time.Millisecond)
	segs[0].Close()
	time.Sleep(50 * time.Millisecond)
	close(stop)
	segs[1].Close()
	<-done
	events, head, _ := journal.ReadJournal(ctx, journal.Of(alloc), "k")
	if err := journal.VerifyChain("k", events, head); err != nil {
		t.Fatal(err)
	}
	rep := journal.Audit("k", events, head, time.Now())
	t.Logf("%d numbers given, %d records, problems %v", len(given), len(events), rep.Problems)
	bad := 0
	for _, sp := range rep.Spans {
		for n := sp.Range.First; n <= sp.Range.Last; n++ {
			if given[n] > 1 {
				t.Errorf("%d given %d times", n, given[n])
			}
			if given[n] > 0 && sp.State != journal.Issued && bad < 10 {
				bad++
				t.Errorf("%d was given, and the audit says %s: %s", n, sp.State, sp.Cause())
			}
			if given[n] == 0 && sp.State == journal.Issued && bad < 10 {
				if bad == 0 {
					for _, e := range events {
						if e.Seq >= sp.Event.Seq-6 && e.Seq <= sp.Event.Seq+14 {
							t.Logf("  %v", e)
						}
					}
				}
				bad++
				t.Errorf("%d was never given, and the audit says issued: %s", n, sp.Cause())
			}
		}
	}
	if len(rep.Problems) > 0 {
		t.Errorf("problems: %v", rep.Problems)
	}
}

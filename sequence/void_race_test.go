package sequence_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/sequencetest"
)

// A void through a Segment's journal, or a Queued's, of a number the
// layer is drawing from the store (reserved there, not yet in the
// layer's hands) is refused like one of a number it holds: no number is
// issued after its void was accepted. Voids race draws of "k" for a
// second, on a store whose notes take 2ms. The control voids through the
// store's own journal, which cannot see what the layers hold, and finds
// voided numbers issued.
func TestVoidRacesDraw(t *testing.T) {
	segment := func(a sequence.Allocator) *sequence.Segment {
		return must(sequence.NewSegment(a, sequence.SegmentOptions{Step: 20, MinStep: 20, MaxStep: 20, Prefetch: 0.5}))
	}
	for _, tt := range []struct {
		name    string
		layer   func(a sequence.Allocator) sequence.Gen
		control bool
	}{
		{"Segment", func(a sequence.Allocator) sequence.Gen { return segment(a) }, false},
		{"Queued over a Segment", func(a sequence.Allocator) sequence.Gen {
			return must(sequence.NewQueued(segment(a), sequence.QueuedOptions{Min: 8, Max: 8}))
		}, false},
		{"control: the store's journal", func(a sequence.Allocator) sequence.Gen { return segment(a) }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := sequence.NewMemoryAllocator()
			g := tt.layer(a)
			defer g.(interface{ Close() error }).Close()
			j := journal.Of(g)
			if tt.control {
				j = a.Journal()
			}
			issued, voided, after := sequencetest.VoidsAhead(t, func(ctx context.Context) (int64, error) { return g.Next(ctx, "k") }, j, "k", time.Second)
			t.Logf("%d numbers issued, %d voids accepted, %d voided numbers issued after their void", issued, voided, after)
			switch {
			case issued < 100 || voided == 0:
				t.Errorf("%d issued and %d voided: too few to tell", issued, voided)
			case tt.control && after == 0:
				t.Error("control: no voided number issued after its void; the race is not exercised")
			case !tt.control && after > 0:
				t.Errorf("%d voided numbers issued after their void was accepted", after)
			}
		})
	}
}

// hungAllocator answers its first Allocate, then none until release is
// closed.
type hungAllocator struct {
	*sequence.MemoryAllocator
	calls   atomic.Int64
	release chan struct{}
}

func (a *hungAllocator) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	if a.calls.Add(1) > 1 {
		<-a.release
	}
	return a.MemoryAllocator.Allocate(ctx, key, n)
}

func (a *hungAllocator) Journal() journal.Keeper { return journal.Of(a.MemoryAllocator) }

// A void waits for the Segment's fetch in flight no longer than its
// context: a store that hangs on a fetch does not hang a void with a
// deadline. Once the fetch returns, a void goes through.
func TestVoidWaitsNoLongerThanItsContext(t *testing.T) {
	a := &hungAllocator{MemoryAllocator: sequence.NewMemoryAllocator(), release: make(chan struct{})}
	s := must(sequence.NewSegment(a, sequence.SegmentOptions{Step: 10, MinStep: 10, MaxStep: 10, Prefetch: 0.5, FetchTimeout: time.Minute}))
	defer s.Close()
	released := false
	defer func() {
		if !released {
			close(a.release) // before Close, which waits for the fetch
		}
	}()
	ctx := t.Context()
	for range 6 { // past the prefetch threshold: the second fetch hangs
		if _, err := s.Next(ctx, "k"); err != nil {
			t.Fatal(err)
		}
	}
	for a.calls.Load() < 2 { // the second fetch has begun
		time.Sleep(time.Millisecond)
	}
	void := func(ctx context.Context, n int64) error {
		_, err := s.Journal().Note(ctx, "k", journal.Event{Kind: journal.Voided, Range: sequence.Range{First: n, Last: n}, Reason: "cancelled"})
		return err
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := void(short, 3); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a void while a fetch hangs: %v; want its deadline", err)
	}
	close(a.release)
	released = true
	if err := void(ctx, 3); err != nil {
		t.Fatalf("a void of an issued number once the fetch returned: %v", err)
	}
}

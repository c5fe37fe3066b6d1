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

// failingAlloc is a MemoryAllocator whose Allocate fails, reserving
// nothing, while down.
type failingAlloc struct {
	*sequence.MemoryAllocator
	down atomic.Bool
}

func (f *failingAlloc) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	if f.down.Load() {
		return sequence.Range{}, errFlaky
	}
	return f.MemoryAllocator.Allocate(ctx, key, n)
}

// A Segment that released a key and then failed its first fetch for it
// notes as lost only what lies between the numbers it had and the block it
// gets next: the blocks it issued before the release stay issued in the
// audit. (Its state for the key started again at 0 after the release,
// and a note from there called numbers it had issued unused.)
func TestSegmentLostAfterRelease(t *testing.T) {
	ctx := context.Background()
	alloc := &failingAlloc{MemoryAllocator: sequence.NewMemoryAllocator()}
	s, err := sequence.NewSegment(alloc, sequence.SegmentOptions{Step: 10, MinStep: 10, MaxStep: 10, FetchTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	given := map[int64]bool{}
	for range 5 {
		n, err := s.Next(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		given[n] = true
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		s.Release("k") // kept while a fetch ahead is in flight
		if _, held := s.KeyStats("k"); !held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the key is never released")
		}
	}
	other, err := alloc.MemoryAllocator.Allocate(ctx, "k", 10) // another process
	if err != nil {
		t.Fatal(err)
	}
	alloc.down.Store(true)
	if _, err := s.Next(ctx, "k"); !errors.Is(err, sequence.ErrUnavailable) {
		t.Fatalf("a fetch that failed: %v, want ErrUnavailable", err)
	}
	alloc.down.Store(false)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		n, err := s.Next(ctx, "k") // the failure holds for a short while
		if err == nil {
			given[n] = true
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	j := journal.Of(alloc)
	events, head, err := journal.ReadJournal(ctx, j, "k")
	if err != nil {
		t.Fatal(err)
	}
	var lost []journal.Range
	for _, e := range events {
		if e.Kind == journal.Lost {
			lost = append(lost, e.Range)
		}
	}
	if len(lost) != 1 || lost[0] != other {
		t.Errorf("lost %v, want %v: between the numbers it had and its next block", lost, other)
	}
	rep := journal.Audit("k", events, head, time.Now())
	for _, sp := range rep.Spans {
		for v := sp.Range.First; v <= sp.Range.Last; v++ {
			if given[v] && sp.State != journal.Issued {
				t.Errorf("%d was issued, and the audit says %s: %s", v, sp.State, sp.Cause())
			}
		}
	}
}

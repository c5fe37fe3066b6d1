package sequence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// A Queued over a Segment: a void of a number still queued is refused, a
// void of one issued is noted, and the numbers dropped at Close are
// unused in the audit, not issued. (Without the Queued's notes the
// Segment beneath counts every number it gave the queue as issued.)
func TestQueuedJournal(t *testing.T) {
	ctx := context.Background()
	store := sequence.NewMemoryAllocator()
	seg, err := sequence.NewSegment(store, sequence.SegmentOptions{Step: 50, MinStep: 50, MaxStep: 50})
	if err != nil {
		t.Fatal(err)
	}
	q, err := sequence.NewQueued(seg, sequence.QueuedOptions{Min: 16, Max: 16})
	if err != nil {
		t.Fatal(err)
	}
	issued := map[int64]bool{}
	for range 3 {
		n, err := q.Next(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		issued[n] = true
	}
	j := journal.Of(q)
	if j == nil {
		t.Fatal("a Queued over a Segment over a store that keeps journals has none")
	}
	if _, err := j.Note(ctx, "k", journal.Event{Kind: journal.Voided, Range: journal.Range{First: 4, Last: 4}, Reason: "x"}); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("a void of 4, queued and not issued: %v, want ErrInvalidArgument", err)
	}
	if _, err := j.Note(ctx, "k", journal.Event{Kind: journal.Voided, Range: journal.Range{First: 2, Last: 2}, Reason: "order cancelled"}); err != nil {
		t.Fatalf("a void of 2, issued: %v", err)
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if err := seg.Close(); err != nil {
		t.Fatal(err)
	}
	events, head, err := journal.ReadJournal(ctx, journal.Of(store), "k")
	if err != nil {
		t.Fatal(err)
	}
	rep := journal.Audit("k", events, head, time.Now())
	if len(rep.Problems) > 0 {
		t.Errorf("problems: %v", rep.Problems)
	}
	for _, sp := range rep.Spans {
		for n := sp.Range.First; n <= sp.Range.Last; n++ {
			want := journal.Unused
			switch {
			case n == 2:
				want = journal.Void
			case issued[n]:
				want = journal.Issued
			}
			if sp.State != want {
				t.Errorf("%d: %s (%s), want %s", n, sp.State, sp.Cause(), want)
			}
		}
	}
}

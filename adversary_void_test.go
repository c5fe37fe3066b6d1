package sn_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// TestAdvVoidAheadOfIssue: Generator.Void accepts any number at or below
// the counter's mark, but with a Segment the mark is the top of the block
// reserved, not the last number issued. A number voided there is issued
// afterwards: the caller prints it, the journal says it is void.
func TestAdvVoidAheadOfIssue(t *testing.T) {
	ctx := context.Background()
	alloc := sequence.NewMemoryAllocator()
	seg, err := sequence.NewSegment(alloc, sequence.SegmentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	g, err := sn.New("INV-@<seq, width=6>", sn.WithSequence("seq", seg))
	if err != nil {
		t.Fatal(err)
	}
	first, err := g.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("issued %s", first)
	// A clerk mistypes the number to void: INV-000005 instead of
	// INV-000001. The Segment holds it, not issued: refused.
	if err := g.Void(ctx, "INV-000005", "typo in the amount"); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Fatalf("void of a number held, not issued: %v, want ErrInvalidArgument", err)
	}
	var printed []string
	for range 5 {
		n, err := g.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		printed = append(printed, n)
	}
	t.Logf("issued after the void: %v", printed)
	key, _ := g.Key(sn.Request{})
	events, head, err := journal.ReadJournal(ctx, journal.Of(alloc), key)
	if err != nil {
		t.Fatal(err)
	}
	rep := journal.Audit(key, events, head, time.Now())
	for _, sp := range rep.Within(5, 5) {
		t.Logf("audit of 5: %s (%s)", sp.State, sp.Cause())
		for _, p := range printed {
			if p == "INV-000005" && sp.State == journal.Void {
				t.Errorf("INV-000005 was issued to a caller after Void, and the journal says it is void")
			}
		}
	}
}

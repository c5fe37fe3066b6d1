package journal_test

import (
	"context"
	"fmt"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// A Segment issues three numbers from a block of five and closes; one of
// them is voided. The journal, found with journal.Of, explains every
// number of the block.
func Example() {
	ctx := context.Background()
	store := sequence.NewMemoryAllocator()
	seg, err := sequence.NewSegment(store, sequence.SegmentOptions{Step: 5, MinStep: 5, MaxStep: 5, Prefetch: 0.9})
	if err != nil {
		panic(err)
	}
	for range 3 {
		if _, err := seg.Next(ctx, "orders"); err != nil {
			panic(err)
		}
	}
	j := journal.Of(seg)
	if _, err := j.Note(ctx, "orders", journal.Event{Kind: journal.Voided, Range: journal.Range{First: 2, Last: 2}, Reason: "order cancelled"}); err != nil {
		panic(err)
	}
	if err := seg.Close(); err != nil {
		panic(err)
	}
	events, head, err := journal.ReadJournal(ctx, journal.Of(store), "orders")
	if err != nil {
		panic(err)
	}
	fmt.Println("chain:", journal.VerifyChain("orders", events, head))
	for _, sp := range journal.Audit("orders", events, head, time.Now()).Spans {
		fmt.Println(sp.Range, sp.State)
	}
	// Output:
	// chain: <nil>
	// [1, 1] issued
	// [2, 2] void
	// [3, 3] issued
}

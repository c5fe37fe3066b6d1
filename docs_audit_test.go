package sn_test

import (
	"testing"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

// The Go fragments of docs/audit.md that need no server, run: TestDocs,
// in cmd/sn, finds each here line for line.
func TestDocAudit(t *testing.T) {
	ctx := t.Context()
	a := sequence.NewMemoryAllocator()
	seg := must(sequence.NewSegment(a, sequence.SegmentOptions{}))
	defer seg.Close()
	invoices := sn.MustNew(`FA-@<seq, width=6>`, sn.WithSequence("seq", seg))
	if _, err := invoices.Issue(ctx, sn.Request{N: 4}); err != nil {
		t.Fatal(err)
	}

	ctx = sn.WithActor(ctx, "alice") // who, in the journal; sn serve names the token
	err := invoices.Void(ctx, "FA-000002", "cancelled, credit note FA-000004")
	if err != nil {
		t.Fatal(err)
	}
	key, _ := invoices.Key(sn.Request{})
	events, _, _ := sequence.ReadJournal(ctx, a, key)
	if last := events[len(events)-1]; last.Kind != sequence.Voided || last.Actor != "alice" || last.Range.First != 2 {
		t.Errorf("the void's record: %v", last)
	}
}

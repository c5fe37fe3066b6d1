package sn_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// The Go fragments of docs/audit.md that need no server, run: TestDocs,
// in cmd/sn, finds each here line for line.
func TestDocAudit(t *testing.T) {
	ctx := t.Context()
	a, invoices := fourInvoices(t)

	ctx = sn.WithActor(ctx, "alice") // who, in the journal; sn serve names the token
	err := invoices.Void(ctx, "FA-000002", "cancelled, credit note FA-000004")
	if err != nil {
		t.Fatal(err)
	}
	key, _ := invoices.Key(sn.Request{})
	events, _, _ := journal.ReadJournal(ctx, journal.Of(a), key)
	if last := events[len(events)-1]; last.Kind != journal.Voided || last.Actor != "alice" || last.Range.First != 2 {
		t.Errorf("the void's record: %v", last)
	}
}

// A number is voided once: a second void of it, by another, is refused
// naming the first voider, when and why, and the journal keeps the first
// void alone. The control: a number not voided yet is voided.
func TestVoidTwice(t *testing.T) {
	ctx := t.Context()
	a, invoices := fourInvoices(t)
	if err := invoices.Void(sn.WithActor(ctx, "alice"), "FA-000002", "cancelled"); err != nil {
		t.Fatalf("control: %v", err)
	}
	err := invoices.VoidNumbers(sn.WithActor(ctx, "bob"), []string{"FA-000001", "FA-000002"}, "again")
	if !errors.Is(err, sequence.ErrInvalidArgument) || !strings.Contains(err.Error(), "alice") || !strings.Contains(err.Error(), "cancelled") {
		t.Errorf("a second void: %v; want it refused naming alice and her reason", err)
	}
	key, _ := invoices.Key(sn.Request{})
	events, _, _ := journal.ReadJournal(ctx, journal.Of(a), key)
	voids := 0
	for _, e := range events {
		if e.Kind == journal.Voided {
			voids++
		}
	}
	if voids != 1 {
		t.Errorf("%d void records, want 1 (none of the refused batch)", voids)
	}
}

// fourInvoices returns a series of invoices over a MemoryAllocator, with
// four numbers issued: FA-000001 to FA-000004.
func fourInvoices(t *testing.T) (*sequence.MemoryAllocator, *sn.Generator) {
	t.Helper()
	a := sequence.NewMemoryAllocator()
	seg := must(sequence.NewSegment(a, sequence.SegmentOptions{}))
	t.Cleanup(func() { seg.Close() })
	invoices := sn.MustNew(`FA-@<seq, width=6>`, sn.WithSequence("seq", seg))
	if _, err := invoices.Issue(t.Context(), sn.Request{N: 4}); err != nil {
		t.Fatal(err)
	}
	return a, invoices
}

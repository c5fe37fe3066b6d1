package journal_test

import (
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/record"
)

// allocate is an allocator over records, as a store's own transaction
// would be: the counter under "n/" and the journal beside it.
func allocate(t *testing.T, s record.Store, key string, n int64) journal.Range {
	t.Helper()
	var r journal.Range
	err := record.Update(t.Context(), s, func(tx *record.Tx) error {
		c, err := tx.Get1("n/" + key)
		if err != nil {
			return err
		}
		var last int64
		if c.Exists() {
			last = int64(len(c.Value))
		}
		r = journal.Range{First: last + 1, Last: last + n}
		tx.Put("n/"+key, []byte(strings.Repeat("x", int(r.Last))))
		_, err = journal.Append(tx, key, last, r.Last, journal.Event{Kind: journal.Reserved, Range: r})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestAppendNoteVerify(t *testing.T) {
	ctx := t.Context()
	for _, key := range []string{"orders", "", strings.Repeat("k", journal.MaxPlain+1)} {
		s := record.NewMemory()
		r1 := allocate(t, s, key, 10)
		allocate(t, s, key, 5)
		var noted journal.Event
		err := record.Update(ctx, s, func(tx *record.Tx) (err error) {
			noted, err = journal.Note(tx, key, journal.Event{Kind: journal.Voided, Range: r1, Reason: "a test"})
			return err
		})
		if err != nil || noted.Seq != 3 || noted.Kind != journal.Voided {
			t.Fatalf("key of %d bytes: Note: %+v, %v", len(key), noted, err)
		}
		err = record.Update(ctx, s, func(tx *record.Tx) error {
			_, err := journal.Note(tx, key, journal.Event{Kind: journal.Voided, Range: journal.Range{First: 16, Last: 20}})
			return err
		})
		if !errors.Is(err, sequence.ErrInvalidArgument) {
			t.Errorf("a void above the mark: %v; want ErrInvalidArgument", err)
		}
		events, head, err := journal.ReadJournal(ctx, journal.InRecords(s), key)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 3 || head.Seq != 3 || head.Mark != 15 {
			t.Errorf("key of %d bytes: %d records, head %+v; want 3 and a mark of 15", len(key), len(events), head)
		}
		if err := journal.VerifyChain(key, events, head); err != nil {
			t.Error(err)
		}
		for _, r := range mustScan(t, s) {
			if err := record.CheckKey(r.Key); err != nil {
				t.Errorf("record key of %d bytes: %v", len(r.Key), err)
			}
		}
	}
}

// TestPrune prunes a journal with a signed record, then refuses a prune
// of a record that changed since it was read.
func TestPrune(t *testing.T) {
	ctx := t.Context()
	s := record.NewMemory()
	for range 4 {
		allocate(t, s, "orders", 10)
	}
	err := record.Update(ctx, s, func(tx *record.Tx) error {
		_, err := journal.Note(tx, "orders", journal.Event{Kind: journal.Closed, Range: journal.Range{First: 1, Last: 40}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	events, head, err := journal.ReadJournal(ctx, journal.InRecords(s), "orders")
	if err != nil {
		t.Fatal(err)
	}
	pub, sk, _ := ed25519.GenerateKey(nil)
	p, err := journal.PruneRecord("orders", events[:3], time.Now(), sk)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := journal.Prune(ctx, s, "orders", p); err != nil {
		t.Fatal(err)
	}
	after, head2, err := journal.ReadJournal(ctx, journal.InRecords(s), "orders")
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 3 || after[0].Kind != journal.Pruned || head2 != head {
		t.Errorf("after the prune: %d records from %v, head %+v; want 3 from a pruned one, head %+v", len(after), after[0].Kind, head2, head)
	}
	if err := journal.VerifySealed("orders", after, head2, []ed25519.PublicKey{pub}, journal.Head{Seq: 2, Hash: events[1].Hash}); err != nil {
		t.Error(err)
	}
	// Record 3 is the Pruned one now, not the one p2 seals.
	p2, err := journal.PruneRecord("orders", events[:3], time.Now(), sk)
	if err != nil {
		t.Fatal(err)
	}
	p2.Seq = 4
	if _, err := journal.Prune(ctx, s, "orders", p2); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("a prune of a record it did not seal: %v; want ErrInvalidArgument", err)
	}
}

func TestCorruptHead(t *testing.T) {
	s := record.NewMemory()
	if _, err := s.Commit(t.Context(), nil, []record.Op{record.Put(journal.HeadKey("orders"), []byte("7 zz 3"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := journal.ReadHead(t.Context(), s, "orders"); !errors.Is(err, journal.ErrCorrupt) {
		t.Errorf("a head written by hand: %v; want ErrCorrupt", err)
	}
}

func mustScan(t *testing.T, s record.Store) []record.Record {
	rs, err := s.Scan(t.Context(), "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// A record is written once: after the head is moved back by hand, the
// next append finds the record past it and refuses, rather than write
// over it and leave a chain that verifies without an anchor. The
// control: before the edit, the append goes through.
func TestAppendWritesOnce(t *testing.T) {
	ctx := t.Context()
	s := record.NewMemory()
	for range 4 {
		allocate(t, s, "orders", 10)
	}
	events, head, err := journal.ReadJournal(ctx, journal.InRecords(s), "orders")
	if err != nil {
		t.Fatal(err)
	}
	back := journal.Head{Seq: 3, Hash: events[2].Hash, Mark: head.Mark}
	if _, err := s.Commit(ctx, nil, []record.Op{record.Put(journal.HeadKey("orders"), journal.EncodeHead(back))}); err != nil {
		t.Fatal(err)
	}
	err = record.Update(ctx, s, func(tx *record.Tx) error {
		_, err := journal.Append(tx, "orders", head.Mark, head.Mark+1, journal.Event{Kind: journal.Reserved, Range: journal.Range{First: head.Mark + 1, Last: head.Mark + 1}})
		return err
	})
	if !errors.Is(err, journal.ErrCorrupt) {
		t.Fatalf("an append after the head was moved back: %v; want ErrCorrupt", err)
	}
	after, _, _ := journal.ReadJournal(ctx, journal.InRecords(s), "orders")
	if after[3].Hash != events[3].Hash {
		t.Errorf("record 4 was written over")
	}
}

// A head keeps the largest number voided as a fourth field, only when
// there is one: a head an earlier release wrote, of three, reads as
// before, and a fourth field of 0, or one that is not a number, is a
// head edited by hand.
func TestHeadVoid(t *testing.T) {
	h := journal.Head{Seq: 7, Hash: [32]byte{1, 2, 3}, Mark: 40, Void: 12}
	got, err := journal.DecodeHead("k", journal.EncodeHead(h))
	if err != nil || got != h {
		t.Fatalf("a head with a void: %+v, %v; want %+v", got, err, h)
	}
	h.Void = 0
	enc := journal.EncodeHead(h)
	if n := len(strings.Fields(string(enc))); n != 3 {
		t.Fatalf("a head without a void has %d fields (%q), want 3 as an earlier release writes", n, enc)
	}
	if got, err := journal.DecodeHead("k", enc); err != nil || got != h {
		t.Fatalf("a head of three fields: %+v, %v", got, err)
	}
	for _, bad := range []string{string(enc) + " 0", string(enc) + " x", string(enc) + " -3", string(enc) + " 1 2"} {
		if _, err := journal.DecodeHead("k", []byte(bad)); !errors.Is(err, journal.ErrCorrupt) {
			t.Errorf("the head %q: %v, want ErrCorrupt", bad, err)
		}
	}
}

// A counter lowered below its journal's mark, above 0, is refused
// (ErrBehind) and nothing is written; a Floor to the mark repairs it
// and leaves the journal as it was. A counter deleted (0), by hand or by
// its expiry, is refused too: starting it again would reissue its
// numbers.
func TestAppendBehind(t *testing.T) {
	ctx := t.Context()
	s := record.NewMemory()
	allocate(t, s, "k", 10)
	change := func(before, mark int64, e journal.Event) error {
		return record.Update(ctx, s, func(tx *record.Tx) error {
			_, err := journal.Append(tx, "k", before, mark, e)
			return err
		})
	}
	reserve := journal.Event{Kind: journal.Reserved, Range: journal.Range{First: 4, Last: 13}}
	if err := change(3, 13, reserve); !errors.Is(err, journal.ErrBehind) || !strings.Contains(err.Error(), "below 10") {
		t.Fatalf("a reservation from a counter at 3, the journal at 10: %v; want ErrBehind", err)
	}
	if err := change(3, 9, journal.Event{Kind: journal.Floored, Range: journal.Range{First: 4, Last: 9}}); !errors.Is(err, journal.ErrBehind) {
		t.Fatalf("a Floor below the journal's mark: %v; want ErrBehind", err)
	}
	if err := change(3, 10, journal.Event{Kind: journal.Floored, Range: journal.Range{First: 4, Last: 10}}); err != nil {
		t.Fatalf("a Floor to the journal's mark: %v", err)
	}
	if err := change(3, 12, journal.Event{Kind: journal.Floored, Range: journal.Range{First: 4, Last: 12}}); err != nil {
		t.Fatalf("a Floor above the journal's mark: %v", err)
	}
	if err := change(0, 5, journal.Event{Kind: journal.Reserved, Range: journal.Range{First: 1, Last: 5}}); !errors.Is(err, journal.ErrBehind) || !strings.Contains(err.Error(), "is gone") {
		t.Fatalf("a reservation from a deleted counter: %v; want ErrBehind", err)
	}
	if err := change(0, 12, journal.Event{Kind: journal.Floored, Range: journal.Range{First: 1, Last: 12}}); err != nil {
		t.Fatalf("a Floor of a deleted counter to the journal's mark: %v", err)
	}
	if err := change(12, 17, journal.Event{Kind: journal.Reserved, Range: journal.Range{First: 13, Last: 17}}); err != nil {
		t.Fatalf("a reservation after the repair: %v", err)
	}
	events, head, err := journal.ReadJournal(ctx, journal.InRecords(s), "k")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Kind.String()+" "+e.Range.String())
	}
	want := "reserved [1, 10] floored [11, 12] reserved [13, 17]"
	if got := strings.Join(kinds, " "); got != want || head.Mark != 17 {
		t.Errorf("the journal: %s, mark %d; want %s, mark 17", got, head.Mark, want)
	}
}

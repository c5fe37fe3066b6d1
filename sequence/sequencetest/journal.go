package sequencetest

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/record"
)

// JournalAllocator is an [sequence.Allocator] whose store keeps a
// [journal.Keeper].
type JournalAllocator interface {
	sequence.Allocator
	journal.Keeper
}

// journaled is an Allocator with the journals journal.Of finds for it.
type journaled struct {
	sequence.Allocator
	journal.Keeper
}

// unjournaled returns the Allocator a journaled one is made of, whose
// other capabilities the tests look for; or a itself.
func unjournaled(a JournalAllocator) sequence.Allocator {
	if j, ok := a.(journaled); ok {
		return j.Allocator
	}
	return a
}

// RunJournal checks the promises of a [journal.Keeper] kept by an
// Allocator: Allocate, Floor and Return each write their record, with
// the writer named by the context ([journal.WithBy]); Note takes
// released, closed and voided records and refuses anything else with
// nothing written; Events pages in order of Seq; the head follows the
// last record and the mark; the chain verifies after many goroutines
// wrote at once; and a [sequence.Segment] that closes leaves every
// number explained. a may be a store shared with other runs: the suite's
// keys are its own.
func RunJournal(t *testing.T, alloc sequence.Allocator) {
	j := journal.Of(alloc)
	if j == nil {
		t.Fatalf("%T keeps no journal: it is neither a journal.Keeper nor a journal.Holder", alloc)
	}
	a := JournalAllocator(journaled{alloc, j})
	if ja, ok := alloc.(JournalAllocator); ok {
		a = ja
	}
	t.Run("Records", func(t *testing.T) { journalRecords(t, a, newKeyspace(t)) })
	t.Run("Note", func(t *testing.T) { journalNote(t, a, newKeyspace(t)) })
	t.Run("Keys", func(t *testing.T) { journalKeys(t, a, newKeyspace(t)) })
	t.Run("Concurrent", func(t *testing.T) { journalConcurrent(t, a, newKeyspace(t)) })
	t.Run("Segment", func(t *testing.T) { journalSegment(t, a, newKeyspace(t)) })
	t.Run("Prune", func(t *testing.T) { journalPrune(t, a, j, newKeyspace(t)) })
	if r := powersOf(alloc).ret; r != nil {
		t.Run("VoidHolds", func(t *testing.T) { journalVoidHolds(t, a, r, newKeyspace(t)) })
	}
	if c := catalog.Of(alloc); c != nil {
		t.Run("Catalog", func(t *testing.T) { journalCatalog(t, a, c, newKeyspace(t)) })
	}
	if rs := record.Of(alloc); rs != nil && journalInRecords(t, a, rs) {
		t.Run("WrittenOnce", func(t *testing.T) { journalWrittenOnce(t, a, rs, newKeyspace(t)) })
	}
}

// journalInRecords reports whether a keeps its journal in its records,
// rs (package journal): a key allocated once has its head there. A store
// that keeps it elsewhere (Redis alone, in its counter's slot; memory)
// has no WrittenOnce check.
func journalInRecords(t *testing.T, a JournalAllocator, rs record.Store) bool {
	t.Helper()
	ctx := context.Background()
	key := newKeyspace(t).key("probe")
	if _, err := a.Allocate(ctx, key, 1); err != nil {
		t.Fatal(err)
	}
	hk, err := rs.Get(ctx, journal.HeadKey(key))
	if err != nil {
		t.Fatal(err)
	}
	return hk[0].Exists()
}

// journalWrittenOnce: where the journal is kept in the store's records
// (package journal), a head moved back by hand (a restore of an old
// backup of one record) stops appends to the key with journal.ErrCorrupt
// rather than writing over the records above it, and the chain reports
// it.
func journalWrittenOnce(t *testing.T, a JournalAllocator, rs record.Store, ks keyspace) {
	ctx := context.Background()
	key := ks.key("orders")
	for range 4 {
		if _, err := a.Allocate(ctx, key, 10); err != nil {
			t.Fatal(err)
		}
	}
	hk, err := rs.Get(ctx, journal.HeadKey(key))
	if err != nil {
		t.Fatal(err)
	}
	events, head, err := journal.ReadJournal(ctx, a, key)
	if err != nil || len(events) != 4 {
		t.Fatalf("%d records, %v; want 4", len(events), err)
	}
	back := journal.Head{Seq: 3, Hash: events[2].Hash, Mark: head.Mark}
	if ok, err := rs.Commit(ctx, hk, []record.Op{record.Put(journal.HeadKey(key), journal.EncodeHead(back))}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	e2, h2, err := journal.ReadJournal(ctx, a, key)
	if err != nil {
		t.Fatal(err)
	}
	if journal.VerifyChain(key, e2, h2) == nil {
		t.Fatal("control: the head moved back verifies")
	}
	if _, err := a.Allocate(ctx, key, 1); !errors.Is(err, journal.ErrCorrupt) {
		t.Errorf("Allocate after the head was moved back: %v; want journal.ErrCorrupt", err)
	}
	after, _, err := journal.ReadJournal(ctx, a, key)
	if err != nil || len(after) < 4 || after[3].Hash != events[3].Hash {
		t.Errorf("record 4 was written over (%v)", err)
	}
}

// journalCatalog: a template enrolled, and forgotten, is in the journal
// of journal.CatalogKey; enrolling it again records nothing more.
func journalCatalog(t *testing.T, a JournalAllocator, c *catalog.Catalog, ks keyspace) {
	ctx := context.Background()
	id := fmt.Sprintf("%x", []byte(ks.prefix))
	if len(id) > 64 {
		id = id[len(id)-64:]
	}
	e := catalog.Entry{ID: id, Name: "sequencetest", Spec: "sequencetest " + ks.prefix}
	for range 2 {
		if _, err := c.Enroll(ctx, e, func([]catalog.Entry) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := c.Forget(ctx, id); err != nil || !ok {
		t.Fatalf("Forget: %v %v", ok, err)
	}
	events, _ := readChain(t, a, journal.CatalogKey)
	var enrolled, forgotten int
	for _, ev := range events {
		if strings.HasPrefix(ev.Reason, id) {
			switch ev.Kind {
			case journal.Enrolled:
				enrolled++
			case journal.Forgotten:
				forgotten++
			}
		}
	}
	if enrolled != 1 || forgotten != 1 {
		t.Errorf("the catalog's journal: %d enrolled and %d forgotten records of the entry, want 1 and 1", enrolled, forgotten)
	}
	if _, err := a.Note(ctx, ks.key("x"), journal.Event{Kind: journal.Enrolled, Reason: "x"}); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("an enrolled record in a counter's journal: %v, want ErrInvalidArgument", err)
	}
}

func journalPrune(t *testing.T, a JournalAllocator, p journal.Keeper, ks keyspace) {
	ctx := context.Background()
	key := ks.key("prune")
	pub, sk, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	keys := []ed25519.PublicKey{pub}
	var last sequence.Range
	for range 5 {
		r, err := a.Allocate(ctx, key, 10)
		if err != nil {
			t.Fatal(err)
		}
		last = r
	}
	if _, err := a.Note(ctx, key, journal.Event{Kind: journal.Voided, Range: sequence.Range{First: 12, Last: 12}, Reason: "a test"}); err != nil {
		t.Fatal(err)
	}
	before, head := readChain(t, a, key)
	early := journal.Head{Seq: 2, Hash: before[1].Hash} // pruned below
	anchor := journal.Head{Seq: 5, Hash: before[4].Hash}
	seal := func(events []journal.Event) journal.Event {
		t.Helper()
		pr, err := journal.PruneRecord(key, events, time.Now(), sk)
		if err != nil {
			t.Fatal(err)
		}
		return pr
	}
	three := seal(before[:3])
	// A record the store refuses: past the head, unsigned, or not the
	// record it ends at.
	past := three
	past.Seq = head.Seq + 1
	unsigned := three
	unsigned.Reason = "records 1 to 3 pruned: nothing to see"
	other := seal(before[:2])
	other.Seq = 3
	for name, bad := range map[string]journal.Event{"past the head": past, "unsigned": unsigned, "another record's hash": other} {
		if _, err := p.Prune(ctx, key, bad); !errors.Is(err, sequence.ErrInvalidArgument) {
			t.Errorf("Prune %s: %v, want ErrInvalidArgument", name, err)
		}
	}
	if events, _ := readChain(t, a, key); len(events) != len(before) {
		t.Fatalf("a refused Prune changed the journal: %d records, were %d", len(events), len(before))
	}
	pr, err := p.Prune(ctx, key, three)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Kind != journal.Pruned || pr.Seq != 3 || pr.Range != (sequence.Range{First: 1, Last: 30}) || pr.Hash != before[2].Hash {
		t.Errorf("the pruned record: %v", pr)
	}
	events, head, err := journal.ReadJournal(ctx, a, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := journal.VerifyChain(key, events, head); err == nil {
		t.Errorf("a pruned journal verifies without the public key of its seal")
	}
	if err := journal.VerifySealed(key, events, head, keys, early, anchor); err != nil {
		t.Errorf("after Prune, with anchors before and after it: %v", err)
	}
	if len(events) != len(before)-2 || events[0].Kind != journal.Pruned {
		t.Errorf("%d records after pruning 3 of %d: %v", len(events), len(before), events)
	}
	rep := journal.Audit(key, events, head, time.Now())
	if !rep.Explained() {
		t.Errorf("after Prune: %v", rep.Problems)
	}
	// Again, through the head; then the journal goes on, and both
	// anchors still verify.
	if _, err := p.Prune(ctx, key, seal(events)); err != nil {
		t.Fatal(err)
	}
	if r, err := a.Allocate(ctx, key, 3); err != nil || r.First != last.Last+1 {
		t.Fatalf("Allocate after Prune: %v %v", r, err)
	}
	events, head, err = journal.ReadJournal(ctx, a, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := journal.VerifySealed(key, events, head, keys, early, anchor); err != nil {
		t.Errorf("after a second Prune: %v", err)
	}
	if len(events) != 2 || !journal.Audit(key, events, head, time.Now()).Explained() {
		t.Errorf("after pruning everything and one block: %v", events)
	}
}

// journalVoidHolds: a number voided while a process holds it unissued
// in its block is never issued afterwards: the process's Return of the
// block's unused top, which would hand the number out again, gives back
// nothing at or below the void. The control: the same Return without a
// void gives the numbers back.
func journalVoidHolds(t *testing.T, a JournalAllocator, ret sequence.Returner, ks keyspace) {
	ctx := context.Background()
	for _, void := range []bool{false, true} {
		key := ks.key(fmt.Sprintf("void-%v", void))
		r, err := a.Allocate(ctx, key, 10)
		if err != nil {
			t.Fatal(err)
		}
		if void {
			if _, err := a.Note(ctx, key, journal.Event{Kind: journal.Voided, Range: sequence.Range{First: r.First + 4, Last: r.First + 4}, Reason: "a test"}); err != nil {
				t.Fatal(err)
			}
		}
		back, err := ret.Return(ctx, key, sequence.Range{First: r.First + 2, Last: r.Last})
		if err != nil {
			t.Fatal(err)
		}
		next, err := a.Allocate(ctx, key, 10)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !void && (!back || next.First != r.First+2):
			t.Errorf("control: Return of the block's top: %v, then %v", back, next)
		case void && (back || next.First <= r.First+4):
			t.Errorf("a void of %d, then Return of %d-%d: %v, and the next block %v issues the void number again", r.First+4, r.First+2, r.Last, back, next)
		}
	}
}

// readChain reads key's journal and verifies its chain.
func readChain(t *testing.T, j journal.Keeper, key string) ([]journal.Event, journal.Head) {
	t.Helper()
	events, head, err := journal.ReadJournal(context.Background(), j, key)
	if err != nil {
		t.Fatalf("ReadJournal(%q): %v", key, err)
	}
	if err := journal.VerifyChain(key, events, head); err != nil {
		t.Fatalf("VerifyChain(%q): %v", key, err)
	}
	return events, head
}

func journalRecords(t *testing.T, a JournalAllocator, ks keyspace) {
	ctx := journal.WithBy(context.Background(), "sequencetest "+ks.prefix)
	key := ks.key("records")
	before := time.Now().Add(-time.Minute)
	var want []journal.Event
	for _, n := range []int64{3, 1, 5} {
		r, err := a.Allocate(ctx, key, n)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, journal.Event{Kind: journal.Reserved, Range: r})
	}
	mark := want[len(want)-1].Range.Last
	if f := powersOf(unjournaled(a)).floor; f != nil {
		if err := f.Floor(ctx, key, mark+10); err != nil {
			t.Fatal(err)
		}
		want = append(want, journal.Event{Kind: journal.Floored, Range: sequence.Range{First: mark + 1, Last: mark + 10}})
		mark += 10
		if err := f.Floor(ctx, key, 2); err != nil { // below the mark: no record
			t.Fatal(err)
		}
	}
	if ret := powersOf(unjournaled(a)).ret; ret != nil {
		r, err := a.Allocate(ctx, key, 4)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, journal.Event{Kind: journal.Reserved, Range: r})
		if ok, err := ret.Return(ctx, key, sequence.Range{First: r.First + 2, Last: r.Last}); err != nil || !ok {
			t.Fatalf("Return: %v %v", ok, err)
		}
		want = append(want, journal.Event{Kind: journal.Returned, Range: sequence.Range{First: r.First + 2, Last: r.Last}})
		if ok, err := ret.Return(ctx, key, sequence.Range{First: r.First + 5, Last: r.Last + 3}); err != nil || ok {
			t.Fatalf("a Return not at the mark: %v %v, want false and no record", ok, err)
		}
		mark = r.First + 1
	}
	events, head := readChain(t, a, key)
	if len(events) != len(want) {
		t.Fatalf("%d records, want %d:\n%v", len(events), len(want), events)
	}
	for i, e := range events {
		w := want[i]
		if e.Seq != int64(i+1) || e.Kind != w.Kind || e.Range != w.Range {
			t.Errorf("record %d: %v, want #%d %s %v", i, e, i+1, w.Kind, w.Range)
		}
		if e.By != "sequencetest "+ks.prefix {
			t.Errorf("record %d: By %q, want the context's writer", i, e.By)
		}
		if e.At.Before(before) || e.At.After(time.Now().Add(time.Minute)) {
			t.Errorf("record %d: At %v, not now", i, e.At)
		}
	}
	if head.Seq != int64(len(want)) || head.Mark != mark || head.Hash != events[len(events)-1].Hash {
		t.Errorf("head %d %d, want record %d and the mark %d", head.Seq, head.Mark, len(want), mark)
	}
	page, err := a.Events(ctx, key, 2, 2)
	if err != nil || len(page) != 2 || page[0].Seq != 3 || page[1].Seq != 4 {
		t.Errorf("Events(after 2, limit 2): %v %v, want records 3 and 4", page, err)
	}
	if page, err := a.Events(ctx, ks.key("none"), 0, 10); err != nil || len(page) != 0 {
		t.Errorf("Events of a key never used: %v %v", page, err)
	}
	if h, err := a.Head(ctx, ks.key("none")); err != nil || h != (journal.Head{}) {
		t.Errorf("Head of a key never used: %v %v", h, err)
	}
}

func journalNote(t *testing.T, a JournalAllocator, ks keyspace) {
	ctx := context.Background()
	key := ks.key("note")
	r, err := a.Allocate(ctx, key, 10)
	if err != nil {
		t.Fatal(err)
	}
	good := []journal.Event{
		{Kind: journal.Voided, Range: sequence.Range{First: r.First, Last: r.First}, Reason: "a test", Actor: "sequencetest"},
		{Kind: journal.Released, Range: sequence.Range{First: r.First + 5, Last: r.Last}, Reason: "a test"},
		{Kind: journal.Closed, Range: sequence.Range{First: 1, Last: r.Last}},
	}
	for _, e := range good {
		got, err := a.Note(ctx, key, e)
		if err != nil {
			t.Fatalf("Note(%v): %v", e, err)
		}
		if got.Kind != e.Kind || got.Range != e.Range || got.Reason != e.Reason || got.Actor != e.Actor || got.Seq == 0 || got.Hash == [32]byte{} {
			t.Errorf("Note(%v) returned %v", e, got)
		}
	}
	bad := []journal.Event{
		{Kind: journal.Voided, Range: sequence.Range{First: r.Last + 1, Last: r.Last + 1}, Reason: "above the mark"},
		{Kind: journal.Voided, Range: sequence.Range{First: r.First, Last: r.First}},
		{Kind: journal.Released, Range: sequence.Range{First: 5, Last: 4}, Reason: "empty"},
		{Kind: journal.Reserved, Range: sequence.Range{First: r.First, Last: r.First}},
		{Kind: journal.Returned, Range: sequence.Range{First: r.Last, Last: r.Last}},
		{Kind: journal.Floored, Range: sequence.Range{First: r.Last + 1, Last: r.Last + 9}},
		{Kind: journal.Closed, Range: sequence.Range{First: 2, Last: r.Last}},
		{Kind: journal.Closed, Range: sequence.Range{First: 1, Last: r.Last + 1}},
		{Kind: journal.Voided, Range: sequence.Range{First: r.First, Last: r.First}, Reason: string(make([]byte, journal.MaxReason+1))},
	}
	for _, e := range bad {
		if _, err := a.Note(ctx, key, e); !errors.Is(err, sequence.ErrInvalidArgument) {
			t.Errorf("Note(%v): %v, want an error wrapping ErrInvalidArgument", e, err)
		}
	}
	events, _ := readChain(t, a, key)
	if len(events) != 1+len(good) {
		t.Errorf("%d records after the refused notes, want %d", len(events), 1+len(good))
	}
	rep := journal.Audit(key, events, journal.Head{Seq: events[len(events)-1].Seq, Hash: events[len(events)-1].Hash, Mark: r.Last}, time.Now())
	if !rep.Explained() {
		t.Errorf("not explained: %v", rep.Problems)
	}
}

func journalKeys(t *testing.T, a JournalAllocator, ks keyspace) {
	ctx := context.Background()
	keys := ks.tricky()
	for _, key := range keys {
		if _, err := a.Allocate(ctx, key, 2); err != nil {
			report(t, a, fmt.Errorf("Allocate(%.40q): %w", key, err))
			return
		}
	}
	for _, key := range keys {
		events, head := readChain(t, a, key)
		if n := len(events); n == 0 || events[n-1].Kind != journal.Reserved || events[n-1].Range.Last != head.Mark {
			t.Errorf("the journal of %.40q: %v, head %v", key, events, head)
		}
	}
}

func journalConcurrent(t *testing.T, a JournalAllocator, ks keyspace) {
	ctx := context.Background()
	key := ks.key("concurrent")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wctx := journal.WithBy(ctx, fmt.Sprintf("worker %d", w))
			for i := range 10 {
				r, err := a.Allocate(wctx, key, int64(1+i%3))
				if err != nil {
					errs <- err
					return
				}
				if i%4 == 3 {
					if _, err := a.Note(wctx, key, journal.Event{Kind: journal.Released, Range: r, Reason: "test"}); err != nil {
						errs <- err
						return
					}
				}
			}
			if _, err := a.Note(wctx, key, journal.Event{Kind: journal.Closed, Range: sequence.Range{First: 1, Last: 1}}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	events, head := readChain(t, a, key)
	rep := journal.Audit(key, events, head, time.Now())
	if len(rep.Problems) > 0 {
		t.Fatalf("problems: %v", rep.Problems)
	}
	if n := len(events); n != 8*10+8*2+8 {
		t.Errorf("%d records, want %d", n, 8*10+8*2+8)
	}
}

func journalSegment(t *testing.T, a JournalAllocator, ks keyspace) {
	ctx := context.Background()
	key := ks.key("segment")
	for round := range 3 {
		s, err := sequence.NewSegment(unjournaled(a), sequence.SegmentOptions{Step: 7})
		if err != nil {
			t.Fatal(err)
		}
		for range 10 + round {
			if _, err := s.Next(ctx, key); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	events, head := readChain(t, a, key)
	rep := journal.Audit(key, events, head, time.Now())
	if !rep.Explained() {
		t.Fatalf("not explained: %v", rep.Problems)
	}
	for _, sp := range rep.Spans {
		if sp.State == journal.Open {
			t.Errorf("%v open after every Segment closed: %s", sp.Range, sp.Cause())
		}
	}
}

package sequence_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/sequencetest"
)

// audit reads key's journal from j, checks its chain and returns its
// report.
func audit(t *testing.T, j journal.Keeper, key string) *journal.Report {
	t.Helper()
	events, head, err := journal.ReadJournal(context.Background(), j, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := journal.VerifyChain(key, events, head); err != nil {
		t.Fatalf("VerifyChain: %v", err)
	}
	return journal.Audit(key, events, head, time.Now())
}

// states sums up a report: the count of numbers in each state.
func states(r *journal.Report) map[journal.State]int64 {
	m := map[journal.State]int64{}
	for _, s := range r.Spans {
		m[s.State] += s.Range.Len()
	}
	return m
}

func newSegment(t *testing.T, a sequence.Allocator, step int64) *sequence.Segment {
	t.Helper()
	s, err := sequence.NewSegment(a, sequence.SegmentOptions{Step: step})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// settle waits, a bounded while, for key's fetches in s to end.
func settle(t *testing.T, s *sequence.Segment, key string) {
	t.Helper()
	for range 500 {
		if st, _ := s.KeyStats(key); !st.Fetching {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("a fetch of %q did not end", key)
}

func take(t *testing.T, g sequence.Gen, key string, n int) []int64 {
	t.Helper()
	var out []int64
	for range n {
		v, err := g.Next(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// TestJournalSegment follows what a Segment's blocks become: a clean
// Close hands back the unused end and closes, so every number below the
// mark is issued; a Close below another process's block leaves its rest
// released; a process that never closes leaves its blocks open.
func TestJournalSegment(t *testing.T) {
	ctx := context.Background()
	a := sequence.NewMemoryAllocator()

	s1 := newSegment(t, a, 10)
	take(t, s1, "k", 15) // blocks [1,10] and [11,20] or more
	settle(t, s1, "k")
	s2 := newSegment(t, a, 10)
	take(t, s2, "k", 3) // the next block, and perhaps one ahead
	settle(t, s2, "k")
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	r := audit(t, journal.Of(a), "k")
	st := states(r)
	if st[journal.Issued] != 15 || st[journal.Unused] < 5 {
		t.Errorf("after the first Close: %v\n%v", st, r.Spans)
	}
	for _, sp := range r.Gaps() {
		if sp.State == journal.Unused && sp.Range.First != 16 {
			t.Errorf("unused %v, want from 16", sp.Range)
		}
	}
	if !r.Explained() {
		t.Errorf("not explained: %v", r.Problems)
	}

	// s2 never closes: its blocks are open, bounded by them.
	r = audit(t, journal.Of(a), "k")
	var open int64
	for _, sp := range r.Spans {
		if sp.State == journal.Open {
			open += sp.Range.Len()
			if !strings.Contains(sp.Cause(), "has not closed") {
				t.Errorf("open cause: %s", sp.Cause())
			}
		}
	}
	if open < 10 {
		t.Errorf("open numbers: %d, want s2's block at least", open)
	}

	// A third process closes cleanly on top: its unused end goes back.
	s3 := newSegment(t, a, 10)
	v := take(t, s3, "k", 1)[0]
	settle(t, s3, "k")
	if err := s3.Close(); err != nil {
		t.Fatal(err)
	}
	h, err := journal.Of(a).Head(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if h.Mark != v {
		t.Errorf("mark after s3's Close: %d, want %d (its last number)", h.Mark, v)
	}
	if r := audit(t, journal.Of(a), "k"); !r.Explained() {
		t.Errorf("not explained: %v", r.Problems)
	}
}

// TestJournalVoidFloorRelease: a void keeps its number used and says why;
// a floor skips; a released key's rest is unused.
func TestJournalVoidFloorRelease(t *testing.T) {
	ctx := context.Background()
	a := sequence.NewMemoryAllocator()
	s := newSegment(t, a, 10)
	take(t, s, "k", 4)
	if _, err := journal.Of(s).Note(ctx, "k", journal.Event{Kind: journal.Voided, Range: sequence.Range{First: 2, Last: 2}, Reason: "customer cancelled", Actor: "alice"}); err != nil {
		t.Fatal(err)
	}
	if _, err := journal.Of(s).Note(ctx, "k", journal.Event{Kind: journal.Voided, Range: sequence.Range{First: 9999, Last: 9999}, Reason: "x"}); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("void above the mark: %v, want ErrInvalidArgument", err)
	}
	if _, err := journal.Of(s).Note(ctx, "k", journal.Event{Kind: journal.Voided, Range: sequence.Range{First: 3, Last: 3}}); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("void without a reason: %v, want ErrInvalidArgument", err)
	}
	if err := s.Floor(ctx, "k", 100); err != nil {
		t.Fatal(err)
	}
	if got := take(t, s, "k", 1)[0]; got != 101 {
		t.Fatalf("after Floor(100): %d", got)
	}
	s.Release("k")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r := audit(t, journal.Of(a), "k")
	state := func(v int64) journal.Span {
		for _, sp := range r.Spans {
			if sp.Range.First <= v && v <= sp.Range.Last {
				return sp
			}
		}
		return journal.Span{}
	}
	for v := int64(1); v <= r.Head.Mark; v++ {
		want := []journal.State{journal.Unused} // released at Release
		switch {
		case v == 2:
			want = []journal.State{journal.Void}
		case v == 1 || v == 3 || v == 4 || v == 101:
			want = []journal.State{journal.Issued}
		case v <= 100: // held and skipped by the floor, or skipped in the store
			want = []journal.State{journal.Unused, journal.Skipped}
		}
		if sp := state(v); !slices.Contains(want, sp.State) {
			t.Errorf("%d: %s, want %v (%s)", v, sp.State, want, sp.Cause())
		}
	}
	got := []journal.Span{state(1), state(2)}
	if c := got[1].Cause(); !strings.Contains(c, "alice") || !strings.Contains(c, "customer cancelled") {
		t.Errorf("void cause: %s", c)
	}
	if !r.Explained() {
		t.Errorf("not explained: %v", r.Problems)
	}
}

// TestVerifyChain: an altered, a deleted and an inserted record, and a
// rewritten chain against an anchor, are each found.
func TestVerifyChain(t *testing.T) {
	ctx := context.Background()
	a := sequence.NewMemoryAllocator()
	for range 5 {
		if _, err := a.Allocate(ctx, "k", 10); err != nil {
			t.Fatal(err)
		}
	}
	events, head, err := journal.ReadJournal(ctx, journal.Of(a), "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := journal.VerifyChain("k", events, head, journal.Head{Seq: 3, Hash: events[2].Hash}); err != nil {
		t.Fatalf("an untouched journal: %v", err)
	}
	cp := func() []journal.Event { return append([]journal.Event(nil), events...) }

	altered := cp()
	altered[2].Range.Last += 5
	deleted := append(cp()[:2], events[3:]...)
	inserted := append(cp()[:3], append([]journal.Event{events[2]}, events[3:]...)...)
	lastGone := cp()[:4]
	rewritten := cp()
	rewritten[1].Reason = "rewritten"
	var prev [32]byte
	for i := range rewritten {
		rewritten[i].Hash = journal.ChainHash(prev, "k", rewritten[i])
		prev = rewritten[i].Hash
	}
	rehead := head
	rehead.Hash = prev

	for _, c := range []struct {
		name   string
		events []journal.Event
		head   journal.Head
		seq    int64
		anchor []journal.Head
	}{
		{"altered", altered, head, 3, nil},
		{"deleted", deleted, head, 3, nil},
		{"inserted", inserted, head, 3, nil},
		{"last deleted", lastGone, head, 5, nil},
		{"other key", events, head, 1, nil},
		{"rewritten", rewritten, rehead, 3, []journal.Head{{Seq: 3, Hash: events[2].Hash}}},
	} {
		key := "k"
		if c.name == "other key" {
			key = "k2"
		}
		err := journal.VerifyChain(key, c.events, c.head, c.anchor...)
		var ce *journal.ChainError
		if !errors.As(err, &ce) || ce.Seq != c.seq {
			t.Errorf("%s: %v, want a ChainError at record %d", c.name, err, c.seq)
			continue
		}
		t.Logf("%s: %v", c.name, err)
	}
}

// TestAuditUnaccounted: a reservation missing from the journal leaves
// its numbers unaccounted; a reservation below the mark is a problem.
func TestAuditUnaccounted(t *testing.T) {
	ctx := context.Background()
	a := sequence.NewMemoryAllocator()
	for range 3 {
		if _, err := a.Allocate(ctx, "k", 10); err != nil {
			t.Fatal(err)
		}
	}
	events, head, _ := journal.ReadJournal(ctx, journal.Of(a), "k")
	gone := append(append([]journal.Event(nil), events[:1]...), events[2:]...)
	r := journal.Audit("k", gone, head, time.Now())
	if r.Explained() || states(r)[journal.Unaccounted] != 10 {
		t.Errorf("a reservation deleted: %v, %v", r.Spans, r.Problems)
	}
	twice := append(append([]journal.Event(nil), events...), events[1])
	r = journal.Audit("k", twice, head, time.Now())
	if r.Explained() || len(r.Problems) == 0 || !strings.Contains(r.Problems[0], "reserved twice") {
		t.Errorf("a block reserved twice: %v", r.Problems)
	}
}

func TestMemoryAllocatorJournal(t *testing.T) {
	sequencetest.RunJournal(t, sequence.NewMemoryAllocator())
}

func TestMemoryAllocatorReplayer(t *testing.T) {
	sequencetest.RunReplayer(t, claim.Of(sequence.NewMemoryAllocator()))
}

// TestPruneForged: whoever can write the store can make a pruned record
// from the hashes it holds (with sn's own PruneRecord, and a key of
// their own), and lay it over the first records of an open period to
// erase a void: the journal then says nothing of the void (the control:
// the forgery has its effect), and it does not verify against the
// auditor's key, nor does an altered, an unsigned or a legacy-sealed
// record. A real prune verifies, and so do anchors taken before it, at
// records it replaced.
func TestPruneForged(t *testing.T) {
	ctx := context.Background()
	a := sequence.NewMemoryAllocator()
	for range 4 {
		if _, err := a.Allocate(ctx, "k", 10); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := journal.Of(a).Note(ctx, "k", journal.Event{Kind: journal.Voided, Range: sequence.Range{First: 3, Last: 3}, Reason: "cancelled"}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := a.Allocate(ctx, "k", 10); err != nil {
			t.Fatal(err)
		}
	}
	events, head, _ := journal.ReadJournal(ctx, journal.Of(a), "k")
	latest := journal.Head{Seq: head.Seq, Hash: head.Hash}
	early := journal.Head{Seq: 2, Hash: events[1].Hash}
	pub, sk, _ := ed25519.GenerateKey(nil)
	_, intruder, _ := ed25519.GenerateKey(nil)
	trusted := []ed25519.PublicKey{pub}

	// The intruder's prune through the void (record 5), without it.
	withoutVoid := append(append([]journal.Event(nil), events[:4]...), journal.Event{Seq: 5, Kind: journal.Released, Range: sequence.Range{First: 3, Last: 3}, Hash: events[4].Hash})
	forged, err := journal.PruneRecord("k", withoutVoid, time.Now(), intruder)
	if err != nil {
		t.Fatal(err)
	}
	forgedJournal := append([]journal.Event{forged}, events[5:]...)
	if rep := journal.Audit("k", forgedJournal, head, time.Now()); countState(rep, journal.Void) != 0 {
		t.Fatalf("control: the forged journal still shows the void: %v", rep.Spans)
	}
	if err := journal.VerifySealed("k", forgedJournal, head, trusted, latest); err == nil || !strings.Contains(err.Error(), "not one of the keys trusted") {
		t.Errorf("a prune forged with another key verifies against the auditor's key and latest anchor: %v", err)
	}
	if err := journal.VerifyChain("k", forgedJournal, head, latest); err == nil {
		t.Error("a signed prune verifies without a key")
	}
	// The same forged record, re-labelled with the trusted key's ID.
	relabelled := forged
	relabelled.Reason = strings.Replace(forged.Reason, journal.KeyID(intruder.Public().(ed25519.PublicKey)), journal.KeyID(pub), 1)
	if err := journal.VerifySealed("k", append([]journal.Event{relabelled}, events[5:]...), head, trusted); err == nil || !strings.Contains(err.Error(), "does not hold") {
		t.Errorf("a forged prune under the trusted key's name: %v", err)
	}
	// A prune sealed the way an earlier release did (a bare hash):
	// anyone can make it.
	legacy := journal.Event{Seq: 5, Kind: journal.Pruned, Range: sequence.Range{First: 1, Last: 40}, At: time.Now(), By: "x", Reason: "nothing to see; seal 00", Hash: events[4].Hash}
	if err := journal.VerifySealed("k", append([]journal.Event{legacy}, events[5:]...), head, trusted); err == nil || !strings.Contains(err.Error(), "without a signature") {
		t.Errorf("a prune sealed by a bare hash: %v", err)
	}

	// The real prune verifies, with anchors before and after.
	p, err := journal.PruneRecord("k", events[:5], time.Now(), sk)
	if err != nil {
		t.Fatal(err)
	}
	good := append([]journal.Event{p}, events[5:]...)
	if err := journal.VerifySealed("k", good, head, trusted, early, latest); err != nil {
		t.Errorf("a pruned record as PruneRecord makes it: %v", err)
	}
	if got := journal.SealedBy(p); got != journal.KeyID(pub) {
		t.Errorf("SealedBy = %q, want %q", got, journal.KeyID(pub))
	}
	if sum := journal.PruneSummary(p); strings.Contains(sum, "signed") || !strings.Contains(sum, "1 void") {
		t.Errorf("PruneSummary = %q", sum)
	}
	// An anchor the prune signed another hash for.
	wrong := early
	wrong.Hash[0] ^= 1
	if err := journal.VerifySealed("k", good, head, trusted, wrong); err == nil {
		t.Error("an anchor before the prune that is not the journal's verifies")
	}
	altered := p
	altered.Range.Last = 5
	if err := journal.VerifySealed("k", append([]journal.Event{altered}, events[5:]...), head, trusted); err == nil {
		t.Error("a pruned record altered verifies")
	}
	one, _ := journal.PruneRecord("k", events[:1], time.Now(), sk)
	if err := journal.VerifySealed("k", append([]journal.Event{one}, events[1:]...), head, trusted, early); err != nil {
		t.Errorf("pruned through the first record: %v", err)
	}
	if _, err := journal.PruneRecord("k", events[:1], time.Now(), nil); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("PruneRecord without a key: %v", err)
	}
}

// countState counts the numbers rep finds in state st.
func countState(rep *journal.Report, st journal.State) int64 {
	var n int64
	for _, sp := range rep.Spans {
		if sp.State == st {
			n += sp.Range.Len()
		}
	}
	return n
}

// TestAuditRestarted: a counter that went back is a problem: its numbers
// may be issued twice. A store refuses to start a counter again now
// (journal.ErrBehind), but a journal written by an earlier release may
// hold a Restarted record.
func TestAuditRestarted(t *testing.T) {
	var head journal.Head
	var events []journal.Event
	for _, e := range []journal.Event{
		{Kind: journal.Reserved, Range: sequence.Range{First: 1, Last: 10}},
		{Kind: journal.Restarted, Range: sequence.Range{First: 0, Last: 0}},
		{Kind: journal.Reserved, Range: sequence.Range{First: 1, Last: 3}},
	} {
		e, head = journal.Chain(head, "k", e)
		head.Mark = e.Range.Last
		events = append(events, e)
	}
	r := journal.Audit("k", events, head, time.Now())
	if r.Explained() || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "may be issued twice") {
		t.Errorf("a counter that went back: %v", r.Problems)
	}
}

// TestAuditVoidReleased: a number voided while the process holding it
// had not issued it, then released unused by that process at its close,
// was never issued: Audit says so, as a problem naming the voider. The
// control: the same release without the void is no problem.
func TestAuditVoidReleased(t *testing.T) {
	ctx := context.Background()
	for _, void := range []bool{false, true} {
		a := sequence.NewMemoryAllocator()
		holder := journal.WithBy(ctx, "holder")
		if _, err := a.Allocate(holder, "k", 10); err != nil {
			t.Fatal(err)
		}
		if void {
			if _, err := journal.Of(a).Note(journal.WithBy(ctx, "clerk"), "k", journal.Event{Kind: journal.Voided, Range: sequence.Range{First: 5, Last: 5}, Reason: "cancelled", Actor: "alice"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := journal.Of(a).Note(holder, "k", journal.Event{Kind: journal.Released, Range: sequence.Range{First: 3, Last: 10}, Reason: "closed"}); err != nil {
			t.Fatal(err)
		}
		events, head, _ := journal.ReadJournal(ctx, journal.Of(a), "k")
		rep := journal.Audit("k", events, head, time.Now())
		switch {
		case !void && len(rep.Problems) > 0:
			t.Errorf("control: %v", rep.Problems)
		case void && (len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "alice") || !strings.Contains(rep.Problems[0], "never issued")):
			t.Errorf("a void of a number released unused: %v", rep.Problems)
		}
	}
}

// A counter deleted under processes that draw from it, as a store's
// expiry deletes one when its clock steps forward past the retention, is
// refused (journal.ErrBehind, ErrRegressed through a Segment) by a store
// that keeps its journal: a
// process that starts afresh does not draw its numbers again. The
// control, a store that keeps no journal (Memory), draws them again.
func TestDeletedCounterRefused(t *testing.T) {
	ctx := context.Background()
	for _, control := range []bool{false, true} {
		a, m := sequence.NewMemoryAllocator(), sequence.NewMemory()
		var expirer sequence.Expirer = a
		process := func() (sequence.Gen, func()) { // a process that starts afresh
			if control {
				return m, func() {}
			}
			s := must(sequence.NewSegment(a, sequence.SegmentOptions{Step: 10}))
			return s, func() { s.Close() }
		}
		if control {
			expirer = m
		}
		seen := map[int64]bool{}
		repeats := 0
		var refused error
		draw := func(n int) {
			g, done := process()
			defer done()
			for range n {
				v, err := g.Next(ctx, "k")
				if err != nil {
					refused = err
					return
				}
				if seen[v] {
					repeats++
				}
				seen[v] = true
			}
		}
		draw(25)
		if err := expirer.Expire(ctx, "k", 0); err != nil { // the store deletes the counter
			t.Fatal(err)
		}
		draw(25)
		switch {
		case control && repeats == 0:
			t.Fatal("the control repeated nothing: the test cannot see a deleted counter")
		case control:
			t.Logf("control: %d numbers drawn twice", repeats)
		case repeats > 0 || !errors.Is(refused, journal.ErrBehind) || !errors.Is(refused, sequence.ErrRegressed) || errors.Is(refused, sequence.ErrUnavailable):
			t.Fatalf("%d numbers drawn twice; the draw from the deleted counter: %v, want journal.ErrBehind and ErrRegressed, not ErrUnavailable (an operator's Floor cures it, not a retry)", repeats, refused)
		default:
			t.Logf("refused: %v", refused)
		}
	}
}

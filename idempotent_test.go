package sn_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/claim"
)

func TestIdempotencyKey(t *testing.T) {
	ctx := context.Background()
	seg, err := sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	g, err := sn.New("INV-@<seq, width=6>", sn.WithSequence("seq", seg))
	if err != nil {
		t.Fatal(err)
	}
	first, err := g.Issue(ctx, sn.Request{N: 3, IdempotencyKey: "order-17"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := g.Issue(ctx, sn.Request{N: 3, IdempotencyKey: "order-17"})
	if err != nil || !slices.Equal(first, again) {
		t.Errorf("the same key again: %v %v, want %v", again, err, first)
	}
	var b sn.Batch
	if err := g.Append(ctx, &b, sn.Request{N: 3, IdempotencyKey: "order-17"}); err != nil || !slices.Equal(b.Strings(), first) {
		t.Errorf("Append with the key: %v %v, want %v", b.Strings(), err, first)
	}
	if _, err := g.Issue(ctx, sn.Request{N: 2, IdempotencyKey: "order-17"}); !errors.Is(err, sn.ErrIdempotencyConflict) {
		t.Errorf("the key with another count: %v, want ErrIdempotencyConflict", err)
	}
	other, err := g.Issue(ctx, sn.Request{N: 3, IdempotencyKey: "order-18"})
	if err != nil || slices.Equal(other, first) {
		t.Errorf("another key: %v %v, want new numbers", other, err)
	}
	if next, _ := g.Next(ctx); next != "INV-000007" {
		t.Errorf("the next number without a key: %s, want INV-000007 (none issued twice, none skipped)", next)
	}

	// Many goroutines with one key: every answer is the one set of
	// numbers, or ErrInProgress; the numbers are issued once.
	var mu sync.Mutex
	answers := map[string]int{}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 1_000_000 {
				nums, err := g.Issue(ctx, sn.Request{N: 2, IdempotencyKey: "burst"})
				if errors.Is(err, sn.ErrInProgress) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				answers[nums[0]+" "+nums[1]]++
				mu.Unlock()
				return
			}
		})
	}
	wg.Wait()
	if len(answers) != 1 {
		t.Errorf("16 calls with one key got %d sets of numbers: %v", len(answers), answers)
	}
	if next, _ := g.Next(ctx); next != "INV-000010" {
		t.Errorf("after the burst: %s, want INV-000010", next)
	}

	// A store that cannot remember keys: the Generator does.
	mem, _ := sn.New("M@<seq>", sn.WithSequence("seq", sequence.NewMemory()))
	a, err1 := mem.Issue(ctx, sn.Request{IdempotencyKey: "x"})
	b2, err2 := mem.Issue(ctx, sn.Request{IdempotencyKey: "x"})
	if err1 != nil || err2 != nil || !slices.Equal(a, b2) {
		t.Errorf("a key over sequence.Memory: %v %v, %v %v, want one answer", a, err1, b2, err2)
	}
}

// An idempotency key belongs to the series, not the spelling: after a
// widening the catalog continues as the same series (width=6 to width=8),
// a retry with the same key gets the first answer, printed as it was; a
// new key gets new numbers (the control). A claim answered by a release
// before this one, under the template's canonical text, is found too; and
// the answer is recorded under the text as well, for a process of that
// release that retries.
func TestIdempotencySeries(t *testing.T) {
	ctx := context.Background()
	alloc := sequence.NewMemoryAllocator()
	narrow := sn.MustNew("SN-@<seq, width=6>", sn.WithSequence("seq", must(sequence.NewSegment(alloc, sequence.SegmentOptions{}))))
	wide := sn.MustNew("SN-@<seq, width=8>", sn.WithSequence("seq", must(sequence.NewSegment(alloc, sequence.SegmentOptions{}))))
	first, err := narrow.Issue(ctx, sn.Request{N: 2, IdempotencyKey: "order-1"})
	if err != nil {
		t.Fatal(err)
	}
	retry, err := wide.Issue(ctx, sn.Request{N: 2, IdempotencyKey: "order-1"})
	if err != nil || !slices.Equal(retry, first) {
		t.Errorf("the retry after the widening: %v, %v; want %v", retry, err, first)
	}
	other, err := wide.Issue(ctx, sn.Request{N: 2, IdempotencyKey: "order-2"})
	if err != nil || slices.Equal(other, first) || len(other[0]) != len("SN-00000001") {
		t.Errorf("a new key after the widening: %v, %v", other, err)
	}
	// The answer is under the canonical text too: a claim there is
	// answered.
	c, err := claim.Of(alloc).Claim(ctx, narrow.String()+"\x00order-1", "", "probe", time.Minute)
	if err != nil || c.Mine || c.Answer == "" {
		t.Errorf("the claim under the template's text: %+v, %v; want the answer recorded", c, err)
	}
}

// A claim answered by the release before this one, keyed by the
// template's canonical text, is found by a retry under this one: the
// upgrade in the middle of a retry issues nothing twice. The control, a
// key nobody claimed, issues.
func TestIdempotencyLegacyClaim(t *testing.T) {
	ctx := context.Background()
	alloc := sequence.NewMemoryAllocator()
	g := sn.MustNew("SN-@<seq, width=6>", sn.WithSequence("seq", must(sequence.NewSegment(alloc, sequence.SegmentOptions{}))))
	req := sn.Request{N: 1, IdempotencyKey: "order-9"}
	legacy := g.String() + "\x00order-9"
	if c, err := claim.Of(alloc).Claim(ctx, legacy, sn.RequestDigest(req), "old", time.Minute); err != nil || !c.Mine {
		t.Fatal(c, err)
	}
	if err := claim.Of(alloc).Settle(ctx, legacy, "old", `["SN-000777"]`, time.Hour); err != nil {
		t.Fatal(err)
	}
	got, err := g.Issue(ctx, req)
	if err != nil || !slices.Equal(got, []string{"SN-000777"}) {
		t.Errorf("a retry of a call the release before answered: %v, %v", got, err)
	}
	again, err := g.Issue(ctx, req)
	if err != nil || !slices.Equal(again, []string{"SN-000777"}) {
		t.Errorf("a second retry, answered under the series' key: %v, %v", again, err)
	}
	fresh, err := g.Issue(ctx, sn.Request{N: 1, IdempotencyKey: "order-10"})
	if err != nil || len(fresh) != 1 || fresh[0] == "SN-000777" {
		t.Errorf("a key nobody claimed: %v, %v", fresh, err)
	}
}

// TestSharedIdempotency: a Generator over a store that keeps claims says
// so; one over a generator of its own keeps them in the process.
func TestSharedIdempotency(t *testing.T) {
	over := sn.MustNew("A@<seq>", sn.WithSequence("seq", must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{}))))
	if !over.SharedIdempotency() {
		t.Error("a Segment over a MemoryAllocator: SharedIdempotency false")
	}
	own := sn.MustNew("A@<seq>", sn.WithSequence("seq", &weirdGen{}))
	if own.SharedIdempotency() {
		t.Error("a generator of one's own: SharedIdempotency true")
	}
}

// An idempotency key is the caller's own, and its entry's: the same key
// through another entry of the series (another Generator name), or from
// another caller (another actor: sn serve's token), is another request,
// refused with ErrIdempotencyConflict, not answered with the first one's
// numbers. The controls: the same entry and caller get the first answer.
func TestIdempotencyScope(t *testing.T) {
	ctx := context.Background()
	alloc := sequence.NewMemoryAllocator()
	gen := func(name string) *sn.Generator {
		return sn.MustNew("SN-@<seq, width=6>", sn.WithName(name), sn.WithSequence("seq", must(sequence.NewSegment(alloc, sequence.SegmentOptions{}))))
	}
	orders, other := gen("orders"), gen("orders-wide")
	alice, bob := sn.WithActor(ctx, "alice"), sn.WithActor(ctx, "bob")
	first, err := orders.Issue(alice, sn.Request{IdempotencyKey: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	if again, err := gen("orders").Issue(alice, sn.Request{IdempotencyKey: "k1"}); err != nil || !slices.Equal(again, first) {
		t.Errorf("control: the same entry and caller: %v, %v; want %v", again, err, first)
	}
	if got, err := other.Issue(alice, sn.Request{IdempotencyKey: "k1"}); !errors.Is(err, sn.ErrIdempotencyConflict) {
		t.Errorf("the key through another entry of the series: %v, %v; want ErrIdempotencyConflict", got, err)
	}
	if got, err := orders.Issue(bob, sn.Request{IdempotencyKey: "k1"}); !errors.Is(err, sn.ErrIdempotencyConflict) {
		t.Errorf("the key from another caller: %v, %v; want ErrIdempotencyConflict", got, err)
	}
}

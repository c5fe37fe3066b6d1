package sn_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
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

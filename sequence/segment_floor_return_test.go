package sequence_test

import (
	"context"
	"testing"

	"github.com/sngen/sn/sequence"
)

// Found by an adversarial review, now fixed: a floor taken on the store by another process (sn floor, a second
// Segment, FloorParsed) while a Segment holds a block is undone by that
// Segment's Close: Return's compare-and-set only compares the mark, and a
// floor at or below the mark leaves the mark as it was. The next Segment
// then issues numbers at or below the floor: numbers the floor said exist
// already (migrated from another system).
func TestSegmentCloseKeepsFloor(t *testing.T) {
	ctx := context.Background()
	store := sequence.NewMemoryAllocator()
	opts := sequence.SegmentOptions{Step: 100, MinStep: 100, MaxStep: 100}

	a := must(sequence.NewSegment(store, opts)) // the running server
	if v, err := a.Next(ctx, "k"); err != nil || v != 1 {
		t.Fatalf("first number %d, %v", v, err)
	}

	// The administrator migrates: numbers up to 50 exist in the old system.
	b := must(sequence.NewSegment(store, opts)) // sn floor, another process
	if err := b.Floor(ctx, "k", 50); err != nil {
		t.Fatal(err)
	}
	b.Close()

	// The server is restarted (its Close hands back [2..100]).
	a.Close()

	c := must(sequence.NewSegment(store, opts))
	defer c.Close()
	v, err := c.Next(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if v <= 50 {
		t.Fatalf("after Floor(50) returned and the old Segment closed, the next number is %d: at or below the floor (a number the old system printed)", v)
	}
}

// The same with the store's Floor called directly, as Generator.Floor on a
// plain allocator-backed Gen would.
func TestSegmentCloseKeepsStoreFloor(t *testing.T) {
	ctx := context.Background()
	store := sequence.NewMemoryAllocator()
	opts := sequence.SegmentOptions{Step: 100, MinStep: 100, MaxStep: 100}
	a := must(sequence.NewSegment(store, opts))
	if _, err := a.Next(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if err := store.Floor(ctx, "k", 50); err != nil {
		t.Fatal(err)
	}
	a.Close()
	r, err := store.Allocate(ctx, "k", 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.First <= 50 {
		t.Fatalf("after Floor(50), Allocate reserved %v", r)
	}
}

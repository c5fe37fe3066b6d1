package sequence_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/sngen/sn/sequence"
)

// counter and boundSink are the physical limit's: one atomic add.
var (
	boundCounter atomic.Int64
	boundSink    int64
)

//go:noinline
func addBehindCall() int64 { return boundCounter.Add(1) }

// boundBlock is a counter reached through a pointer loaded atomically,
// as a Segment's current block is: the floor of any design that swaps
// blocks under callers without a lock.
var boundBlock atomic.Pointer[atomic.Int64]

//go:noinline
func addThroughPointer() int64 { return boundBlock.Load().Add(1) }

// casThroughPointer takes a number the way a take that never consumes a
// number it cannot return must: load the counter, then compare-and-swap
// it. Inline, it is the floor of SegmentKey.TryNext.
func casThroughPointer() int64 {
	c := boundBlock.Load()
	for {
		if u := c.Load(); c.CompareAndSwap(u, u+1) {
			return u + 1
		}
	}
}

// BenchmarkBoundHandle measures a key's bound handle against an atomic
// add, inline and behind a call, in interleaved rounds so that the
// machine's load falls on all of them (make bench runs it):
//
//	go test -run '^$' -bench BoundHandle ./sequence
//
// The goal was the handle at 0.8 or more of the add behind a call. It is
// not met, and cannot be by these means (medians on a 2-core machine):
//
//   - SegmentKey.TryNext, inlined, is about 0.7 of the add behind a call.
//     An inlined function may make no call, so it cannot start the next
//     fetch when it reaches the prefetch threshold; it must then miss and
//     leave the work to Next without having taken a number (an add would
//     have consumed one, a gap in the series). Taking without consuming
//     is a load and a compare-and-swap, and the load waits for the
//     previous locked instruction: "load and compare-and-swap, inline"
//     below is that floor, and TryNext runs at it.
//   - SegmentKey.Next, behind a call, is about 0.5. Its add is the add
//     behind a call's; the rest is its signature: the context and the
//     error interface cost about 2ns a call (the same body returning
//     (int64, bool) without a context measured 0.8).
func BenchmarkBoundHandle(b *testing.B) {
	ctx := context.Background()
	const step = 1 << 24 // a block outlasts a round: what is measured is the warm path
	seg, err := sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{Step: step, MinStep: step, MaxStep: step})
	if err != nil {
		b.Fatal(err)
	}
	defer seg.Close()
	boundBlock.Store(new(atomic.Int64))
	k := seg.Bound("k")
	var h sequence.Handle = seg.Bind("k")
	if _, err := k.Next(ctx); err != nil {
		b.Fatal(err)
	}
	for range 4 {
		b.Run("add inline", func(b *testing.B) {
			for b.Loop() {
				boundSink = boundCounter.Add(1)
			}
		})
		b.Run("add behind a call", func(b *testing.B) {
			for b.Loop() {
				boundSink = addBehindCall()
			}
		})
		b.Run("add through a loaded pointer, behind a call", func(b *testing.B) {
			for b.Loop() {
				boundSink = addThroughPointer()
			}
		})
		b.Run("load and compare-and-swap, inline", func(b *testing.B) {
			for b.Loop() {
				boundSink = casThroughPointer()
			}
		})
		b.Run("SegmentKey.TryNext, inlined", func(b *testing.B) {
			for b.Loop() {
				n, ok := k.TryNext()
				if !ok {
					var err error
					if n, err = k.Next(ctx); err != nil {
						b.Fatal(err)
					}
				}
				boundSink = n
			}
		})
		b.Run("SegmentKey.Next", func(b *testing.B) {
			for b.Loop() {
				n, err := k.Next(ctx)
				if err != nil {
					b.Fatal(err)
				}
				boundSink = n
			}
		})
		b.Run("Handle.Next", func(b *testing.B) {
			for b.Loop() {
				n, err := h.Next(ctx)
				if err != nil {
					b.Fatal(err)
				}
				boundSink = n
			}
		})
	}
}

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

// BenchmarkBoundHandle measures a key's bound handle against an atomic
// add, inline and behind a call, in interleaved rounds so that the
// machine's load falls on all of them (make bench runs it):
//
//	go test -run '^$' -bench BoundHandle ./sequence
//
// The goal is the handle at 0.8 or more of the add behind a call: a
// number costs a load, the add and a compare more than the counter alone.
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

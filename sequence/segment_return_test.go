package sequence_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// A Segment hands back at Close what it holds and nobody took: the next
// Segment on the store continues after the last number issued, with the
// block fetched ahead included; not when another reserved since.
func TestSegmentCloseReturns(t *testing.T) {
	ctx := context.Background()
	store := sequence.NewMemoryAllocator()
	draw := func(seg *sequence.Segment, n int) int64 {
		var v int64
		for range n {
			var err error
			if v, err = seg.Next(ctx, "k"); err != nil {
				t.Fatal(err)
			}
		}
		return v
	}
	opts := sequence.SegmentOptions{Step: 100, MinStep: 100, MaxStep: 100}
	seg := must(sequence.NewSegment(store, opts))
	if v := draw(seg, 5); v != 5 {
		t.Fatalf("5th number %d", v)
	}
	seg.Close()
	seg = must(sequence.NewSegment(store, opts))
	if v := draw(seg, 1); v != 6 {
		t.Fatalf("after Close, the next Segment drew %d, want 6", v)
	}
	draw(seg, 94) // past the prefetch threshold: the next block is fetched
	for {
		if st, _ := seg.KeyStats("k"); st.Next.First > 0 {
			break
		}
	}
	seg.Close()
	seg = must(sequence.NewSegment(store, opts))
	if v := draw(seg, 1); v != 101 {
		t.Fatalf("after Close with a block fetched ahead, the next Segment drew %d, want 101", v)
	}
	// Another reserves meanwhile: nothing is handed back.
	other, _ := store.Allocate(ctx, "k", 1)
	seg.Close()
	seg = must(sequence.NewSegment(store, opts))
	if v := draw(seg, 1); v != other.Last+1 {
		t.Fatalf("after another reserved %v, the next Segment drew %d, want %d", other, v, other.Last+1)
	}
	seg.Close()
}

// Callers draw from a Segment while it closes and hands back its blocks;
// the next Segment draws from the store. No number comes out twice. The
// control hands back one number more than Close would, one that was
// issued, and sees it again.
func TestSegmentCloseReturnsUnderLoad(t *testing.T) {
	ctx := context.Background()
	run := func(t *testing.T, control bool) (repeats int) {
		store := sequence.NewMemoryAllocator()
		seen := map[int64]bool{}
		var mu sync.Mutex
		keep := func(vs []int64) {
			mu.Lock()
			defer mu.Unlock()
			for _, v := range vs {
				if seen[v] {
					repeats++
				}
				seen[v] = true
			}
		}
		for range 50 {
			seg := must(sequence.NewSegment(store, sequence.SegmentOptions{Step: 64, MinStep: 8, MaxStep: 512}))
			var wg sync.WaitGroup
			start := make(chan struct{})
			for range 4 {
				wg.Go(func() {
					var vs []int64
					<-start
					for {
						v, err := seg.Next(ctx, "k")
						if errors.Is(err, sequence.ErrClosed) {
							break
						}
						if err != nil {
							t.Error(err)
							break
						}
						vs = append(vs, v)
					}
					keep(vs)
				})
			}
			close(start)
			for {
				if st, _ := seg.KeyStats("k"); st.Issued > 200 {
					break
				}
			}
			seg.Close()
			wg.Wait()
			if control {
				mu.Lock()
				var top int64
				for v := range seen {
					top = max(top, v)
				}
				mu.Unlock()
				h, _ := journal.Of(store).Head(ctx, "k")
				store.Return(ctx, "k", sequence.Range{First: top, Last: h.Mark})
			}
		}
		return repeats
	}
	if n := run(t, false); n != 0 {
		t.Errorf("%d numbers issued twice across Segments closed under load", n)
	}
	if n := run(t, true); n == 0 {
		t.Errorf("control: handing back an issued number repeated nothing: the test cannot see a repeat")
	}
}

package sequence_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/sngen/sn/sequence"
)

// yieldAlloc is a MemoryAllocator whose calls yield the processor a random
// number of times before and after reserving, so that fetches land at
// varied points of the callers' work.
type yieldAlloc struct{ inner *sequence.MemoryAllocator }

func yield() {
	for range rand.IntN(5) {
		runtime.Gosched()
	}
}

func (a yieldAlloc) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	yield()
	defer yield()
	return a.inner.Allocate(ctx, key, n)
}

func (a yieldAlloc) Floor(ctx context.Context, key string, floor int64) error {
	yield()
	return a.inner.Floor(ctx, key, floor)
}

// TestSegmentRaces runs two Segments over one allocator, with tiny blocks
// that switch all the time, callers mixing Next, Handle.Next and NextN, and
// Floor raised meanwhile through both: no number comes out twice, and a
// number taken after Floor returns is above the floor.
func TestSegmentRaces(t *testing.T) {
	tests := []struct {
		name string
		opts sequence.SegmentOptions
	}{
		{"step-1", sequence.SegmentOptions{Step: 1, MaxStep: 1}},
		{"early-prefetch", sequence.SegmentOptions{Step: 2, MinStep: 1, MaxStep: 8, Prefetch: 0.01}},
		{"late-prefetch", sequence.SegmentOptions{Step: 3, MinStep: 1, MaxStep: 8, Prefetch: 0.99}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 40 {
				racesRound(t, tt.opts)
				if t.Failed() {
					return
				}
			}
		})
	}
}

func racesRound(t *testing.T, opts sequence.SegmentOptions) {
	ctx := t.Context()
	a := yieldAlloc{sequence.NewMemoryAllocator()}
	segs := []*sequence.Segment{must(sequence.NewSegment(a, opts)), must(sequence.NewSegment(a, opts))}
	defer func() {
		for _, s := range segs {
			s.Close()
		}
	}()
	var mu sync.Mutex
	var all []int64
	keep := func(nums ...int64) {
		mu.Lock()
		all = append(all, nums...)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			s := segs[g%2]
			h := s.Bind("k")
			k := s.Bound("k")
			var mine []int64
			for i := range 200 {
				var n int64
				var err error
				switch i % 4 {
				case 0:
					n, err = s.Next(ctx, "k")
				case 1:
					n, err = h.Next(ctx)
				case 3:
					var ok bool
					if n, ok = k.TryNext(); !ok {
						n, err = k.Next(ctx)
					}
				case 2:
					mine, err = s.NextN(ctx, "k", mine, 1+i%7)
					n = 0
				}
				if err != nil {
					t.Errorf("goroutine %d: %v", g, err)
					break
				}
				if n != 0 {
					mine = append(mine, n)
				}
			}
			keep(mine...)
		})
	}
	wg.Go(func() {
		for i := range 20 {
			s, floor := segs[i%2], int64(i*150)
			if err := s.Floor(ctx, "k", floor); err != nil {
				t.Errorf("Floor(%d): %v", floor, err)
				return
			}
			n, err := s.Next(ctx, "k")
			if err != nil {
				t.Errorf("Next after Floor(%d): %v", floor, err)
				return
			}
			if n <= floor {
				t.Errorf("Next after Floor(%d) = %d", floor, n)
			}
			keep(n)
		}
	})
	wg.Wait()
	noRepeats(t, all)
}

// TestSegmentCloseRacesNext closes a Segment under callers switching tiny
// blocks: they all end with an error, and no number comes out twice.
func TestSegmentCloseRacesNext(t *testing.T) {
	for range 100 {
		s := must(sequence.NewSegment(yieldAlloc{sequence.NewMemoryAllocator()}, sequence.SegmentOptions{Step: 2, MaxStep: 2}))
		var mu sync.Mutex
		var all []int64
		var wg sync.WaitGroup
		running := make(chan struct{}, 4)
		for range 4 {
			wg.Go(func() {
				var mine []int64
				for {
					n, err := s.Next(context.Background(), "k")
					if err != nil {
						break
					}
					if mine = append(mine, n); len(mine) == 5 {
						running <- struct{}{}
					}
				}
				mu.Lock()
				all = append(all, mine...)
				mu.Unlock()
			})
		}
		for range 4 {
			<-running
		}
		if err := s.Close(); err != nil {
			t.Fatalf("Close = %v", err)
		}
		wg.Wait()
		noRepeats(t, all)
	}
}

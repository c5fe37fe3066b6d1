package sequence_test

import (
	"context"
	"sync"
	"testing"

	"github.com/sngen/sn/sequence"
)

// asks records the size of each Allocate.
type asks struct {
	sequence.Allocator
	mu sync.Mutex
	n  []int64
	at []int64 // the mark before each
}

func (a *asks) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	r, err := a.Allocator.Allocate(ctx, key, n)
	a.mu.Lock()
	a.n, a.at = append(a.n, n), append(a.at, r.First-1)
	a.mu.Unlock()
	return r, err
}

// A limit keeps every block within 1/64 of what is left of the width,
// however fast the step grows, for the base's own key and the keys made
// from it; other keys are not limited.
func TestSegmentLimit(t *testing.T) {
	ctx := context.Background()
	store := &asks{Allocator: sequence.NewMemoryAllocator()}
	newSeg := func() *sequence.Segment {
		seg := must(sequence.NewSegment(store, sequence.SegmentOptions{Step: 1000, MaxStep: 1 << 30, Target: 1 << 62}))
		seg.Limit(`D\|x`, 999_999)
		seg.Limit(`D\|x`, 9_999_999) // the smaller limit holds
		return seg
	}
	for _, key := range []string{`D\|x`, `D\|x|2017-03-04`} {
		seg := newSeg()
		for range 300_000 {
			if _, err := seg.Next(ctx, key); err != nil {
				t.Fatal(err)
			}
		}
		seg.Close() // no fetch runs after
		store.mu.Lock()
		for i, n := range store.n {
			if want := max((999_999-store.at[i])/64, 1); n > want {
				t.Errorf("key %q: block %d asked for %d numbers at %d: more than 1/64 of the %d left", key, i, n, store.at[i], 999_999-store.at[i])
			}
		}
		if len(store.n) < 5 {
			t.Errorf("key %q: %d fetches", key, len(store.n))
		}
		store.n, store.at = nil, nil
		store.mu.Unlock()
	}
	seg := newSeg()
	for range 300_000 {
		seg.Next(ctx, `D|x`) // another base: "D", not limited
	}
	seg.Close()
	store.mu.Lock()
	defer store.mu.Unlock()
	if store.n[len(store.n)-1] <= 999_999/64 {
		t.Errorf("a key of another base was limited: blocks %v", store.n)
	}
}

package sequence_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/sequencetest"
)

func TestMemoryConformance(t *testing.T) {
	sequencetest.Run(t, func(t *testing.T) sequence.Gen { return sequence.NewMemory() })
}

// TestMemoryAllocs pins Memory's hot paths at zero allocations.
func TestMemoryAllocs(t *testing.T) {
	ctx := context.Background()
	m := sequence.NewMemory()
	h := m.Bind("bound")
	if _, err := m.Next(ctx, "unbound"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		f    func()
	}{
		{"Handle.Next", func() { _, _ = h.Next(ctx) }},
		{"Memory.Next", func() { _, _ = m.Next(ctx, "unbound") }},
	}
	for _, tt := range tests {
		if n := testing.AllocsPerRun(1000, tt.f); n != 0 {
			t.Errorf("%s: %v allocations per call; want 0", tt.name, n)
		}
	}
}

func TestMemoryExpirer(t *testing.T) {
	m := sequence.NewMemory()
	sequencetest.RunExpirer(t, m, m.Next)
}

func TestMemoryAllocatorExpirer(t *testing.T) {
	a := sequence.NewMemoryAllocator()
	sequencetest.RunExpirer(t, a, sequencetest.AllocDraw(a))
}

func TestMemoryCatalog(t *testing.T) { sequencetest.RunCatalog(t, catalog.Of(sequence.NewMemory())) }

func TestMemoryAllocatorCatalog(t *testing.T) {
	sequencetest.RunCatalog(t, catalog.Of(sequence.NewMemoryAllocator()))
}

func TestSegmentCatalog(t *testing.T) {
	seg := must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{}))
	defer seg.Close()
	sequencetest.RunCatalog(t, catalog.Of(seg))
}

// Remember keeps the first value of a name in a store's records, and
// says why it refuses.
func TestRemember(t *testing.T) {
	ctx := t.Context()
	a := sequence.NewMemoryAllocator()
	if v, err := sequence.Remember(ctx, a, "place", "a"); v != "a" || err != nil {
		t.Fatalf("the first Remember: %q, %v", v, err)
	}
	seg := must(sequence.NewSegment(a, sequence.SegmentOptions{}))
	if v, err := sequence.Remember(ctx, seg, "place", "b"); v != "a" || err != nil {
		t.Fatalf("Remember through a Segment over the same store: %q, %v; want the first value", v, err)
	}
	if _, err := sequence.Remember(ctx, a, "", "x"); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("Remember with no name: %v; want ErrInvalidArgument", err)
	}
	if _, err := sequence.Remember(ctx, a, "big", strings.Repeat("x", 4097)); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("Remember of 4097 bytes: %v; want ErrInvalidArgument", err)
	}
	bare := must(sequence.NewSegment(bareAllocator{a}, sequence.SegmentOptions{}))
	if _, err := sequence.Remember(ctx, bare, "place", "a"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Remember over an Allocator that keeps no records: %v; want errors.ErrUnsupported", err)
	}
}

// bareAllocator is an Allocator and nothing more.
type bareAllocator struct{ a sequence.Allocator }

func (b bareAllocator) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	return b.a.Allocate(ctx, key, n)
}

package sequence_test

import (
	"context"
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

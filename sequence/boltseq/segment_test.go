package boltseq_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
	"github.com/sngen/sn/sequence/sequencetest"
)

// The tests in this file run a [sequence.Segment] over a Store, the way the
// CLI and most programs use it.

func TestSegmentConformance(t *testing.T) {
	sequencetest.Run(t, func(t *testing.T) sequence.Gen {
		return must(sequence.NewSegment(open(t, tempPath(t), boltseq.Options{}), sequence.SegmentOptions{Step: 10}))
	})
}

// TestRestartSegment issues numbers through a Segment, closes everything,
// reopens the file under a new Segment and checks that numbers continue
// above all earlier ones, numbers left in the old Segment's blocks becoming
// a gap.
func TestRestartSegment(t *testing.T) {
	path := tempPath(t)
	ctx := t.Context()
	var maxSeen int64
	for round := range 4 {
		s := open(t, path, boltseq.Options{})
		seg := must(sequence.NewSegment(s, sequence.SegmentOptions{Step: 10}))
		for i := range 25 + round {
			n, err := seg.Next(ctx, "k")
			if err != nil {
				t.Fatalf("round %d: Next: %v", round, err)
			}
			if n <= maxSeen {
				t.Fatalf("round %d, call %d: Next = %d, not above %d issued before", round, i, n, maxSeen)
			}
			maxSeen = n
		}
		// Close the Segment first: it stops its background fetches.
		if err := seg.Close(); err != nil {
			t.Fatal(err)
		}
		if last := mustLast(t, s, "k"); last < maxSeen {
			t.Fatalf("round %d: the store's mark %d is below the issued %d", round, last, maxSeen)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func BenchmarkSegmentNext(b *testing.B) {
	s, err := boltseq.Open(filepath.Join(b.TempDir(), "sn.db"), boltseq.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	seg := must(sequence.NewSegment(s, sequence.SegmentOptions{Step: 1000}))
	defer seg.Close()
	ctx := context.Background()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := seg.Next(ctx, "bench"); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

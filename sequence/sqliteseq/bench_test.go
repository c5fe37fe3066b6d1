package sqliteseq_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
	"github.com/sngen/sn/sequence/sqliteseq"
)

// BenchmarkStores measures a range of 1,000 (one fsynced transaction with
// its journal record) and a number through a Segment, on a SQLite file
// beside a bbolt file, interleaved so that the machine's load falls on
// both:
//
//	go test -run '^$' -bench Stores -count 3 ./sequence/sqliteseq
func BenchmarkStores(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	lite := must(sqliteseq.Open(filepath.Join(dir, "lite.db"), sqliteseq.Options{}))
	defer lite.Close()
	bolt := must(boltseq.Open(filepath.Join(dir, "bolt.db"), boltseq.Options{}))
	defer bolt.Close()
	stores := []struct {
		name string
		a    sequence.Allocator
	}{{"sqlite", lite}, {"bolt", bolt}}
	for _, s := range stores {
		b.Run(s.name+"/range-1000", func(b *testing.B) {
			for b.Loop() {
				if _, err := s.a.Allocate(ctx, "bench", 1000); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, s := range stores {
		seg := must(sequence.NewSegment(s.a, sequence.SegmentOptions{}))
		b.Run(s.name+"/number", func(b *testing.B) {
			h := seg.Bind("numbers")
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h.Next(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		seg.Close()
	}
}

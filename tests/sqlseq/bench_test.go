package sqlseq_test

import (
	"context"
	"testing"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sqlseq"
)

// BenchmarkLedger compares, in one run on one database, a Segment over the
// ledger (one statement per block) with one statement per number, the way
// a table-backed counter without blocks works. Both run under RunParallel.
func BenchmarkLedger(b *testing.B) {
	ctx := context.Background()
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			db := be.open(b)
			store := newStore(b, be, db, sqlseq.Options{})
			b.Run("segment", func(b *testing.B) {
				seg := must(sequence.NewSegment(store, sequence.SegmentOptions{}))
				defer seg.Close()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := seg.Next(ctx, "bench-segment"); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
			// One block, its replication checked in the transaction, and
			// the same with the server declared alone: the check's cost.
			declared := newStore(b, be, db, sqlseq.Options{Replication: sqlseq.SingleServer})
			for _, c := range []struct {
				name  string
				store *sqlseq.Store
			}{{"block-checked", store}, {"block-declared-single", declared}} {
				b.Run(c.name, func(b *testing.B) {
					for b.Loop() {
						if _, err := c.store.Allocate(ctx, "bench-block", 1000); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			b.Run("statement-per-number", func(b *testing.B) {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := store.Allocate(ctx, "bench-each", 1); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		})
	}
}

package etcdseq_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/sngen/sn/internal/etcdtest"
	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/etcdseq"
	"github.com/sngen/sn/sequence/sqlseq"
)

// BenchmarkLedgers measures what a range costs on each ledger the tests
// run, interleaved in rounds so that the machine's load falls on all: one
// Allocate on a three-member etcd cluster (a compare-and-swap transaction,
// committed through Raft on a majority) against one on PostgreSQL (one
// statement, fsynced), and numbers through a Segment over each, with the
// default options (the step grows with the rate):
//
//	go test -run '^$' -bench Ledgers -count 3 ./sequence/etcdseq
func BenchmarkLedgers(b *testing.B) {
	ctx := context.Background()
	etcd := newStore(b, etcdtest.Shared(b), etcdseq.Options{})
	pg := pgtest.Shared(b)
	db, err := sql.Open("pgx", pg.NewDatabase(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	pgStore, err := sqlseq.New(db, sqlseq.Postgres, sqlseq.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := pgStore.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	stores := []struct {
		name string
		a    sequence.Allocator
	}{{"etcd", etcd}, {"postgres", pgStore}}
	segs := make([]*sequence.Segment, len(stores))
	for i, s := range stores {
		seg, err := sequence.NewSegment(s.a, sequence.SegmentOptions{})
		if err != nil {
			b.Fatal(err)
		}
		defer seg.Close()
		segs[i] = seg
	}
	for range 3 {
		for _, s := range stores {
			b.Run("range on "+s.name, func(b *testing.B) {
				for b.Loop() {
					if _, err := s.a.Allocate(ctx, "bench-range", 1000); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		for i, s := range stores {
			b.Run("Segment over "+s.name, func(b *testing.B) {
				for b.Loop() {
					if _, err := segs[i].Next(ctx, "bench-segment"); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

package sqlseq_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/snowflake"
	"github.com/sngen/sn/sequence/sqlseq"
)

// A snowflake Gen enrolls its template in the catalog of its lease store,
// the ledger, under its numbering: a counter template that prints the
// same strings on that ledger is refused (ids and counters are not one
// counter), and the same snowflake template, in another process, is one
// series.
func TestCatalogSnowflake(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			store := newStore(t, b, b.open(t), sqlseq.Options{})
			ids := func() *sn.Generator {
				g, err := snowflake.New(ctx, snowflake.Sonyflake, snowflake.Options{Leaser: must(sqlseq.NewLeaser(store, sqlseq.LeaserOptions{}))})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { g.Close() })
				return sn.MustNew(`ID-@<seq>`, sn.WithSequence("seq", g))
			}
			if err := ids().Enroll(ctx); err != nil {
				t.Fatal(err)
			}
			if err := ids().Enroll(ctx); err != nil {
				t.Fatalf("the same snowflake template again: %v", err)
			}
			seg := must(sequence.NewSegment(store, sequence.SegmentOptions{}))
			defer seg.Close()
			counter := sn.MustNew(`ID-@<seq>`, sn.WithSequence("seq", seg))
			err := counter.Enroll(ctx)
			if !errors.Is(err, sn.ErrAmbiguous) {
				t.Fatalf("a counter template printing the snowflake template's strings: %v, want ErrAmbiguous", err)
			}
			t.Log(err)
			other := sn.MustNew(`C-@<seq>`, sn.WithSequence("seq", seg))
			if err := other.Enroll(ctx); err != nil {
				t.Fatal(err)
			}
			es, err := catalog.Of(store).Entries(ctx)
			if err != nil || len(es) != 2 {
				t.Fatalf("entries %v, %v", es, err)
			}
		})
	}
}

// catalogTemplate returns the i-th of a mix of templates with distinct
// literal text: a prefix, a date first, an owner key, a variable first.
func catalogTemplate(i int) string {
	switch i % 8 {
	case 0, 1, 2:
		return fmt.Sprintf("P%d-@<seq, width=8>-@<checksum, algo=luhn>", i)
	case 3, 4:
		return fmt.Sprintf("@<date, format=yyyyMMdd>D%d@<seq, width=4, reset=day>", i)
	case 5, 6:
		return fmt.Sprintf("@<ownerKey, value=O%d>-@<seq, width=6>", i)
	}
	return fmt.Sprintf("@<area, chars=0-9, maxlen=3>-V%d-@<seq, width=5, key=area>", i)
}

// BenchmarkEnrollLedger measures enrolling a new template in the catalog
// of a PostgreSQL ledger that holds 1, 100 and 1,000 templates: the row
// lock, reading every entry, the proof against those whose ends meet the
// new one's, the insert. Every op is warm: this process compiled the
// templates when it made the rows; internal/engine's BenchmarkEnroll
// measures what a new process adds, rebuilding them.
//
//	go test -run '^$' -bench EnrollLedger ./tests/sqlseq
func BenchmarkEnrollLedger(b *testing.B) {
	ctx := context.Background()
	pg := postgresBackend()
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("templates=%d", n), func(b *testing.B) {
			db := pg.open(b)
			store := newStore(b, pg, db, sqlseq.Options{})
			// The catalog's entries, made in memory and written as records.
			mem := sequence.NewMemory()
			for i := range n {
				if err := sn.MustNew(catalogTemplate(i), sn.WithSequence("seq", mem)).Enroll(ctx); err != nil {
					b.Fatal(err)
				}
			}
			es, _ := catalog.Of(mem).Entries(ctx)
			if err := catalog.Of(store).Import(ctx, es); err != nil {
				b.Fatal(err)
			}
			seg := must(sequence.NewSegment(store, sequence.SegmentOptions{}))
			defer seg.Close()
			i := 1 << 20
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				g := sn.MustNew(catalogTemplate(i), sn.WithSequence("seq", seg))
				i++
				b.StartTimer()
				if err := g.Enroll(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

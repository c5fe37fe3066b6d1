package sqlseq_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
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
			store := newStore(t, b, b.open(t), nil)
			ids := func() *sn.Generator {
				g, err := snowflake.New(ctx, snowflake.Sonyflake, snowflake.Options{Leaser: sqlseq.NewLeaser(store, nil)})
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
			seg := sequence.NewSegment(store, sequence.SegmentOptions{})
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
			es, err := store.Entries(ctx)
			if err != nil || len(es) != 2 {
				t.Fatalf("entries %v, %v", es, err)
			}
		})
	}
}

package sqlseq_test

import (
	"database/sql"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sqlseq"
)

// The ledger fragments of docs/stores.md, run on PostgreSQL: TestDocs, in
// cmd/sn, finds each here line for line.
func TestDocStores(t *testing.T) {
	ctx := t.Context()
	dsn := pgtest.Shared(t).NewDatabase(t)

	db, err := sql.Open("pgx", dsn)                                  // postgres://sn@db.internal/orders; or "mysql" with go-sql-driver
	ledger, err := sqlseq.New(db, sqlseq.Postgres, sqlseq.Options{}) // table sn_ledger, one row per key
	err = ledger.Migrate(ctx)                                        // CREATE TABLE IF NOT EXISTS
	seg, err := sequence.NewSegment(ledger, sequence.SegmentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	defer seg.Close()
	if n, err := seg.Next(ctx, "k"); err != nil || n != 1 {
		t.Fatalf("the first number of the ledger's Segment: %d, %v", n, err)
	}

	invoices := sn.MustNew(`INV-@<date, format=yyyy>-@<seq, width=6, reset=year>`,
		sn.WithSequence("seq", ledger.Gapless()))
	tx, err := db.BeginTx(ctx, nil)
	n, err := invoices.Next(sqlseq.WithTx(ctx, tx)) // the row is locked until tx ends
	// ... insert the invoice ...
	err = tx.Commit() // or Rollback: the number goes to the next invoice
	if err != nil || len(n) != len("INV-2026-000001") {
		t.Fatalf("a gapless number in a transaction: %q, %v", n, err)
	}

	// docs/audit.md: a gapless number held, then committed or voided.
	g := ledger.Gapless()
	h2, _ := g.Hold(ctx, "inv", time.Hour)
	h, err := g.Hold(ctx, "inv", time.Hour)
	err = g.Commit(ctx, "inv", h.N)
	err = g.Void(ctx, "inv", h2.N, "draft abandoned")
	if err != nil || h.N != h2.N+1 {
		t.Fatalf("holds %v %v: %v", h, h2, err)
	}
}

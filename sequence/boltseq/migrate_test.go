package boltseq_test

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/journal"
)

// TestMigrateRelease36dc60d opens a file written by the release on main
// before the records (commit 36dc60d: testdata/release-36dc60d.db, made
// by testdata/release-36dc60d.go.txt run at that commit; two
// counters, a floor, two catalog entries, a record, an answered
// idempotency key) and finds everything
// it held: the counters continue above their marks, the catalog keeps
// its entries as they were enrolled, the journal verifies against the
// anchor taken then, and the old catalog bucket is gone.
func TestMigrateRelease36dc60d(t *testing.T) {
	ctx := t.Context()
	b, err := os.ReadFile("testdata/release-36dc60d.db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for open := 1; open <= 2; open++ { // migrated at the first open; the second finds it done
		s, err := boltseq.Open(path, boltseq.Options{})
		if err != nil {
			t.Fatal(err)
		}
		es, err := catalog.Of(s).Entries(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != 2 || es[0].Name != "orders" || es[1].Name != "invoices" || es[0].First.IsZero() || es[0].By != "fixture" || es[1].Spec != `{"fixture":"invoices"}` {
			t.Fatalf("open %d: the catalog holds %+v; want the release's two entries", open, es)
		}
		if v, err := sequence.Remember(ctx, s, "fixture", "other"); err != nil || v != "kept" {
			t.Fatalf("open %d: the release's record: %q, %v", open, v, err)
		}
		c, err := claim.Of(s).Claim(ctx, "series\x00order-1", "digest-1", "retry", time.Minute)
		if err != nil || c.Mine || c.Answer != `["SN-000042"]` {
			t.Fatalf("open %d: a retry of the key the release answered: %+v, %v; want its answer", open, c, err)
		}
		if open == 1 {
			anchor := journal.Head{Seq: 2, Mark: 150}
			h, _ := hex.DecodeString("594a5a89c809c9a0555ba36f640d6ba83768956df542da5a8a95fb670b917c94")
			copy(anchor.Hash[:], h)
			events, head, err := journal.ReadJournal(ctx, journal.Of(s), "order")
			if err != nil {
				t.Fatal(err)
			}
			if err := journal.VerifyChain("order", events, head, anchor); err != nil {
				t.Fatalf("the journal against the anchor taken by the release: %v", err)
			}
			if r, err := s.Allocate(ctx, "order", 10); err != nil || r.First != 151 {
				t.Fatalf("order after the release's 150: %v, %v", r, err)
			}
			if r, err := s.Allocate(ctx, "invoice", 1); err != nil || r.First != 5001 {
				t.Fatalf("invoice after the release's floor of 5000: %v, %v", r, err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		for _, b := range []string{"sn.catalog", "sn.records", "sn.idem"} {
			if tx.Bucket([]byte(b)) != nil {
				t.Errorf("the release's bucket %s is still there after the migration", b)
			}
		}
		return nil
	})
}

package sn_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/record"
)

// A call of MaxN numbers with an idempotency key, on a durable store
// (bbolt), is answered and replayed, and a store keeps an answer of 2 MiB:
// a claim's answer up to claim.MaxAnswer fits a record once
// JSON-encoded in its Memo (found by adversary run 3: the records took a
// megabyte, and such calls failed, their numbers voided).
func TestIdempotencyLargeAnswer(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{1000, 40_000, sn.MaxN} {
		store, err := boltseq.Open(filepath.Join(t.TempDir(), "s.db"), boltseq.Options{})
		if err != nil {
			t.Fatal(err)
		}
		seg, err := sequence.NewSegment(store, sequence.SegmentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		g, err := sn.New("INVOICE-2026-@<seq, width=8>", sn.WithSequence("seq", seg))
		if err != nil {
			t.Fatal(err)
		}
		first, err := g.Issue(ctx, sn.Request{N: n, IdempotencyKey: "order-big"})
		ans := 0
		if err == nil {
			ans = len(`["` + strings.Join(first, `","`) + `"]`)
		}
		t.Logf("N=%d: err=%v (answer %d bytes; MaxAnswer %d, record.MaxValue %d)", n, err, ans, claim.MaxAnswer, record.MaxValue)
		if err != nil {
			t.Errorf("N=%d with an idempotency key fails: %v", n, err)
		} else {
			again, err := g.Issue(ctx, sn.Request{N: n, IdempotencyKey: "order-big"})
			if err != nil || !slices.Equal(first, again) {
				t.Errorf("N=%d retry: %v, equal=%v", n, err, slices.Equal(first, again))
			}
		}
		// Direct: Replayer contract says answers up to MaxAnswer are kept.
		rp := claim.Of(store)
		c, err := rp.Claim(ctx, "direct", "d", "tok", time.Minute)
		if err != nil || !c.Mine {
			t.Fatal(c, err)
		}
		err = rp.Settle(ctx, "direct", "tok", strings.Repeat("x", 2<<20), time.Hour)
		t.Logf("direct Settle of a 2 MiB answer (<= MaxAnswer): %v", err)
		if err != nil {
			t.Errorf("Settle of a 2 MiB answer, within MaxAnswer: %v", err)
		}
		seg.Close()
		store.Close()
	}
}

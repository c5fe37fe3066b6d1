package sn_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
)

// The fragments of docs/stores.md that need no server, run: TestDocs, in
// cmd/sn, finds each here line for line.
func TestDocStores(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "sn.db")

	store, err := boltseq.Open(path, boltseq.Options{})               // one local file, fsynced
	seg, err := sequence.NewSegment(store, sequence.SegmentOptions{}) // Step 1000, adaptive
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	defer seg.Close()

	orders := sn.MustNew(`PO@<seq, width=7>`, sn.WithSequence("seq", seg))
	{
		err := orders.Floor(ctx, 4_000_000) // every later number is above 4000000
		if n, _ := orders.Next(ctx); err != nil || n != "PO4000001" {
			t.Errorf("after Floor: %s, %v", n, err)
		}
	}

	segA := must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{}))
	segB := must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{}))
	defer segA.Close()
	defer segB.Close()
	strictCounter := sequence.NewMemory()
	{
		// A number is value<<1 | index: the two stores can never issue one number
		// twice, and numbering goes on while one of them is down.
		b, err := sequence.NewBalanced([]sequence.Gen{segA, segB}, sequence.BalancedOptions{
			Rescue:  30 * time.Second,       // a failed store is out of the turn this long
			Timeout: 200 * time.Millisecond, // a call slower than this fails over
		})
		// Numbers drawn ahead of demand from a Gen that cannot reserve blocks.
		q, err2 := sequence.NewQueued(strictCounter, sequence.QueuedOptions{Lead: 50 * time.Millisecond})
		if err != nil || err2 != nil {
			t.Fatal(err, err2)
		}
		defer q.Close()
		x, _ := b.Next(ctx, "k")
		y, _ := b.Next(ctx, "k")
		if x == y || x&1 == y&1 {
			t.Errorf("Balanced gave %d then %d: want the two stores in turn", x, y)
		}
		if n, err := q.Next(ctx, "k"); err != nil || n != 1 {
			t.Errorf("Queued: %d, %v", n, err)
		}
	}

	var logged strings.Builder
	audit := slog.New(slog.NewTextHandler(&logged, nil))
	otherStore := sequence.NewMemory()
	down := &switchable{m: sequence.NewMemory()}
	{
		store := down
		backup := sn.MustNew(`B-@<seq, width=8>`, sn.WithSequence("seq", otherStore))
		orders, err := sn.New(`A-@<seq, width=8>`, sn.WithSequence("seq", store),
			sn.WithMiddleware(sn.Log(audit), sn.Fallback(backup), sn.Retry(2*time.Second)))
		if err != nil {
			t.Fatal(err)
		}
		a, _ := orders.Next(ctx)
		store.down = true
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		b, err := orders.Next(ctx)
		if a != "A-00000001" || b != "B-00000001" || err != nil {
			t.Errorf("up %q, down %q, %v", a, b, err)
		}
		if !strings.Contains(logged.String(), "first=B-00000001") {
			t.Errorf("the audit log: %s", logged.String())
		}
	}
}

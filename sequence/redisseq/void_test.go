package redisseq_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/redisseq"
)

// TestVoidHolds: over Redis in front of a ledger, a void holds. A number
// still in the range Redis serves, which no process has taken, is refused
// (the control: it is issued afterwards); a number handed out and voided
// is not given back by a Return of its block's top (the control: the same
// Return without the void gives the numbers back, and they are issued
// again). The same for the strict Counter.
func TestVoidHolds(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	ledger := pgLedger(t)
	a := must(redisseq.NewAllocator(rdb, ledger, redisseq.AllocatorOptions{Chunk: 100}))
	void := func(j journal.Keeper, key string, n int64) error {
		_, err := j.Note(ctx, key, journal.Event{Kind: journal.Voided, Range: sequence.Range{First: n, Last: n}, Reason: "a test"})
		return err
	}

	r, err := a.Allocate(ctx, "inv", 10)
	if err != nil || r != (sequence.Range{First: 1, Last: 10}) {
		t.Fatalf("Allocate: %v %v", r, err)
	}
	if err := void(journal.Of(a), "inv", 50); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("void of 50, in Redis's range and not taken: %v, want ErrInvalidArgument", err)
	} else {
		t.Logf("refused: %v", err)
	}
	if r, _ := a.Allocate(ctx, "inv", 45); r.Last < 50 {
		t.Fatalf("control: 50 not issued after the refused void: %v", r)
	}
	// Number 55, handed out in [51, 60], voided; the holder returns the
	// top [53, 60] of its block.
	r, _ = a.Allocate(ctx, "inv", 10)
	if err := void(journal.Of(a), "inv", r.First+4); err != nil {
		t.Fatalf("void of %d, handed out: %v", r.First+4, err)
	}
	if back, err := a.Return(ctx, "inv", sequence.Range{First: r.First + 2, Last: r.Last}); err != nil || back {
		t.Errorf("Return of %d-%d over the void %d: %v %v, want refused", r.First+2, r.Last, r.First+4, back, err)
	}
	if next, _ := a.Allocate(ctx, "inv", 10); next.First <= r.First+4 {
		t.Errorf("after the void of %d the next block is %v: the void number is issued again", r.First+4, next)
	}
	// The control: no void, and the Return gives the top back.
	r, _ = a.Allocate(ctx, "other", 10)
	if back, err := a.Return(ctx, "other", sequence.Range{First: r.First + 2, Last: r.Last}); err != nil || !back {
		t.Fatalf("control: Return without a void: %v %v", back, err)
	}
	if next, _ := a.Allocate(ctx, "other", 10); next.First != r.First+2 {
		t.Errorf("control: the next block %v, want from %d", next, r.First+2)
	}

	// The strict Counter: 3 issued, 50 still in Redis's range.
	c := must(redisseq.NewCounter(rdb, ledger, redisseq.CounterOptions{Step: 100, Prefix: "strict:"}))
	for range 3 {
		if _, err := c.Next(ctx, "tk"); err != nil {
			t.Fatal(err)
		}
	}
	if err := void(journal.Of(c), "tk", 50); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("Counter: void of 50, not issued: %v, want ErrInvalidArgument", err)
	}
	if err := void(journal.Of(c), "tk", 2); err != nil {
		t.Errorf("Counter: void of 2, issued: %v", err)
	}
}

// A strict Counter reaches the journals of every ledger that keeps them:
// those that give them through a Journal method (bolt, memory) as well as
// a Keeper (SQL). Its void of an issued number is noted there.
func TestCounterLedgerJournals(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	bolt, err := boltseq.Open(filepath.Join(t.TempDir(), "ledger.db"), boltseq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bolt.Close() })
	for _, l := range []struct {
		name   string
		ledger sequence.Allocator
	}{{"memory", sequence.NewMemoryAllocator()}, {"bolt", bolt}} {
		t.Run(l.name, func(t *testing.T) {
			c := must(redisseq.NewCounter(rdb, l.ledger, redisseq.CounterOptions{Step: 10, Prefix: l.name + ":"}))
			for range 3 {
				if _, err := c.Next(ctx, "k"); err != nil {
					t.Fatal(err)
				}
			}
			j := journal.Of(c)
			if _, err := j.Note(ctx, "k", journal.Event{Kind: journal.Voided, Range: sequence.Range{First: 2, Last: 2}, Reason: "a test"}); err != nil {
				t.Fatalf("a void of 2, issued: %v", err)
			}
			events, _, err := journal.ReadJournal(ctx, j, "k")
			if err != nil {
				t.Fatal(err)
			}
			if last := events[len(events)-1]; last.Kind != journal.Voided {
				t.Errorf("the journal ends with %v, want the void", last)
			}
		})
	}
}

package redisseq_test

import (
	"context"
	"testing"
	"time"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/redisseq"
	"github.com/sngen/sn/sequence/sequencetest"
)

// A void through Redis's journal races the refills of its range: a
// number the ledger reserved for a refill not yet installed in Redis is
// not handed out once its void was accepted. One goroutine takes
// numbers one at a time (the Allocator's ranges of 1, the strict
// Counter); three void numbers just above the last taken. The control
// voids in the ledger directly, past the check of Redis's range, and
// finds voided numbers handed out afterwards.
func TestVoidRacesRefill(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	ledger := pgLedger(t)
	a := must(redisseq.NewAllocator(rdb, ledger, redisseq.AllocatorOptions{Chunk: 20, Prefix: "a:"}))
	c := must(redisseq.NewCounter(rdb, ledger, redisseq.CounterOptions{Step: 20, Prefix: "c:"}))
	fromA := func(key string) (int64, error) { r, err := a.Allocate(ctx, key, 1); return r.First, err }
	for _, tt := range []struct {
		name    string
		next    func(key string) (int64, error)
		j       journal.Keeper
		control bool
	}{
		{"Allocator", fromA, journal.Of(a), false},
		{"Counter", func(key string) (int64, error) { return c.Next(ctx, key) }, journal.Of(c), false},
		{"control: the ledger's journal", fromA, journal.Of(ledger), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key := "k-" + tt.name
			takenN, voidedN, after := sequencetest.VoidsAhead(t, func(context.Context) (int64, error) { return tt.next(key) }, tt.j, key, 2*time.Second)
			t.Logf("%d numbers handed out, %d voids accepted, %d voided numbers handed out after their void", takenN, voidedN, after)
			switch {
			case takenN < 100 || voidedN == 0:
				t.Errorf("%d handed out and %d voided: too few to tell", takenN, voidedN)
			case tt.control && after == 0:
				t.Error("control: no voided number handed out after its void; the race is not exercised")
			case !tt.control && after > 0:
				t.Errorf("%d voided numbers handed out after their void was accepted", after)
			}
		})
	}
}

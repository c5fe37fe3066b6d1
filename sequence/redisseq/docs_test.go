package redisseq_test

import (
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
	"github.com/sngen/sn/sequence/snowflake"
)

// The Redis fragments of docs/stores.md, run on Redis over a PostgreSQL
// ledger: TestDocs, in cmd/sn, finds each here line for line.
func TestDocStores(t *testing.T) {
	ctx := t.Context()
	rdb := redistest.Start(t, redistest.Persistent()).Client(t)
	ledger := pgLedger(t)

	alloc, err := redisseq.NewAllocator(rdb, ledger, redisseq.AllocatorOptions{})
	seg, err := sequence.NewSegment(alloc, sequence.SegmentOptions{})
	strict, err := redisseq.NewCounter(rdb, ledger, redisseq.CounterOptions{}) // "first come, first served" across all machines
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	a, errA := seg.Next(ctx, "a")
	b, errB := strict.Next(ctx, "b")
	if a != 1 || b != 1 || errA != nil || errB != nil {
		t.Fatalf("Segment over the Allocator: %d, %v; strict Counter: %d, %v", a, errA, b, errB)
	}

	leaser, err := redisseq.NewLeaser(rdb, redisseq.LeaserOptions{}) // worker ids leased from Redis
	gen, err := snowflake.New(ctx, snowflake.Twitter, snowflake.Options{
		Leaser: leaser,
		TTL:    10 * time.Second, // renewed every TTL/4
	})
	id, err := gen.Next(ctx, "")                              // a sequence.Gen: the key does not matter
	orders := sn.MustNew(`@<id>`, sn.WithSequence("id", gen)) // or print it in a template
	defer gen.Close()
	n, err2 := orders.Next(ctx)
	if err != nil || err2 != nil || id <= 0 || n == "" {
		t.Fatalf("snowflake: %d, %v; %q, %v", id, err, n, err2)
	}
}

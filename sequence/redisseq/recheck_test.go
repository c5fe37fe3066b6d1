package redisseq_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence/redisseq"
	"github.com/sngen/sn/sequence/snowflake"
)

// TestPersistenceChangedWhileRunning: Redis fsyncs every write when the
// Allocator without a ledger, and the Leaser, first use it; then an
// operator sets appendfsync everysec (CONFIG SET) while they run. Within
// a second, the Allocator's next block and the lease's next renewal are
// refused (ErrUnsafe): checked again, not once. The control: before the
// change, both work.
func TestPersistenceChangedWhileRunning(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.Persistent())
	rdb := srv.Client(t)
	a := must(redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{}))
	l := must(redisseq.NewLeaser(rdb, redisseq.LeaserOptions{Prefix: "lease:"}))
	lease, err := l.Lease(ctx, snowflake.Twitter, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Allocate(ctx, "k", 10); err != nil {
		t.Fatalf("control: %v", err)
	}
	if err := lease.Renew(ctx, time.Now()); err != nil {
		t.Fatalf("control: renew: %v", err)
	}
	if err := rdb.ConfigSet(ctx, "appendfsync", "everysec").Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	if _, err := a.Allocate(ctx, "k", 10); !errors.Is(err, redisseq.ErrUnsafe) {
		t.Errorf("Allocate after appendfsync everysec: %v, want ErrUnsafe", err)
	}
	if err := lease.Renew(ctx, time.Now()); !errors.Is(err, redisseq.ErrUnsafe) {
		t.Errorf("Renew after appendfsync everysec: %v, want ErrUnsafe", err)
	}
}

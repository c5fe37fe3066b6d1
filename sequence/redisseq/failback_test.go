package redisseq_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

// Found by an adversarial review, now fixed: a failover to a lagging
// replica and, later, back to the old master. No client touches the key
// while B is master. When A rejoins as B's replica it takes B's (lagging)
// copy of the range, installed by A itself, and A's run_id does not change
// on REPLICAOF; when A is promoted again, it has a new replication ID, so
// the range is not taken from and nothing repeats. (With the boot made of
// the run_id alone, the counter repeated 50 numbers, the Segment 35.)
func TestLedgerFailoverAndBack(t *testing.T) {
	for _, gen := range []string{"counter", "segment"} {
		t.Run(gen, func(t *testing.T) { failback(t, gen) })
	}
}

func failback(t *testing.T, gen string) {
	ctx := context.Background()
	a := redistest.Start(t)
	b := redistest.StartReplica(t, a)
	ledger := pgLedger(t)
	ra, rb := a.Client(t), b.Client(t)
	open := func(rdb *redis.Client) (sequence.Gen, func()) {
		if gen == "counter" {
			return must(redisseq.NewCounter(rdb, ledger, redisseq.CounterOptions{Step: 1000})), func() {}
		}
		seg := must(sequence.NewSegment(must(redisseq.NewAllocator(rdb, ledger, redisseq.AllocatorOptions{Chunk: 1000})),
			sequence.SegmentOptions{Step: 10, MinStep: 10, MaxStep: 10}))
		return seg, func() { seg.Close() }
	}
	seen := map[int64]bool{}
	repeats := 0
	issue := func(g sequence.Gen, n int) {
		for range n {
			v, err := g.Next(ctx, "orders")
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			if seen[v] {
				repeats++
			}
			seen[v] = true
		}
	}
	g1, close1 := open(ra)
	issue(g1, 5)
	rkey := must(redisseq.NewCounter(ra, ledger, redisseq.CounterOptions{})).Key("orders")
	// B has everything so far; the link then breaks (B keeps cur5).
	redistest.Detach(t, b, a, func(ctx context.Context, r *redis.Client) bool {
		c := r.HGet(ctx, rkey, "cur").Val()
		return c != "" && c == ra.HGet(ctx, rkey, "cur").Val()
	})
	// A, not yet told, keeps issuing: B never gets these.
	issue(g1, 50)
	close1()
	// Sentinel promotes B (already master after Detach) and turns A into
	// B's replica: A's data is now B's copy, boot = A's run_id.
	if err := ra.SlaveOf(ctx, "127.0.0.1", portOf(b.Addr())).Err(); err != nil {
		t.Fatal(err)
	}
	waitSync(t, ra)
	t.Logf("A after resync from B: %v", ra.HGetAll(ctx, rkey).Val())
	_ = rb
	// Later, a failover back to A (B goes down, say). A keeps its run_id.
	if err := ra.SlaveOf(ctx, "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	g2, close2 := open(ra)
	issue(g2, 50)
	close2()
	if repeats != 0 {
		t.Errorf("%d numbers issued twice after failing over to B and back to A (no restart, same run_id on A)", repeats)
	}
}

func portOf(addr string) string {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			return addr[i+1:]
		}
	}
	return addr
}

func waitSync(t *testing.T, r *redis.Client) {
	ctx := context.Background()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		info, err := r.Info(ctx, "replication").Result()
		if err == nil && contains(info, "master_link_status:up") && contains(info, "master_sync_in_progress:0") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no sync: %v %s", err, info)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

var _ = strconv.Itoa

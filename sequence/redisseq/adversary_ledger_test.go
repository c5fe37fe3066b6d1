package redisseq_test

// Regression tests from an adversarial review of the ledger: each test
// below reproduced a repeat, a hang or a misreported error before its fix,
// as its comment describes.
import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

// advHook runs after on every command a client processed.
type advHook struct {
	after func(ctx context.Context, cmd redis.Cmder)
}

func (h advHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h advHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.after(ctx, cmd)
		return err
	}
}
func (h advHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// takeExactScript compares left (max - cur) with want as Lua doubles. Above
// 2^53 two different integers compare equal, so a block can be taken past
// the end of the range: numbers the ledger never reserved. After Redis
// loses its data, the ledger hands them out again.
//
// Interleaving (two processes, A and B, one Redis, one ledger): A asks for
// a block of W = 2^60 numbers, reserves [1, W] from the ledger and
// installs it; before A's take, B takes 10 numbers from the range; A's
// take sees left = W-10, which as a double equals W, and takes W numbers,
// up to W+10 > max = W. The hook makes the interleaving deterministic.
func TestAdversaryExactTakePastRangeEnd(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	ledger := sequence.NewMemoryAllocator()
	b := must(redisseq.NewAllocator(srv.Client(t), ledger, redisseq.AllocatorOptions{Chunk: 10}))

	const W = int64(1) << 60
	var bRange sequence.Range
	var fired atomic.Bool
	rdbA := srv.Client(t)
	admin := srv.Client(t)
	rdbA.AddHook(advHook{after: func(ctx context.Context, cmd redis.Cmder) {
		args := cmd.Args()
		// the install script: evalsha <sha> 1 <key> <cur> <max> <ledger>
		if len(args) == 7 && args[0] == "evalsha" && args[2] == 1 && admin.Exists(ctx, "sn:{k}:range").Val() == 1 && fired.CompareAndSwap(false, true) {
			t0 := time.Now()
			t.Logf("range before B: %v", admin.HGetAll(ctx, "sn:{k}:range").Val())
			r, err := b.Allocate(ctx, "k", 10) // process B, between A's install and A's take
			t.Logf("hook on %v: B got %v, %v in %v", args, r, err, time.Since(t0))
			if err != nil {
				t.Errorf("B.Allocate: %v", err)
			}
			bRange = r
		}
	}})
	a := must(redisseq.NewAllocator(rdbA, ledger, redisseq.AllocatorOptions{Chunk: 10}))
	aRange, err := a.Allocate(ctx, "k", W)
	if err != nil {
		t.Fatalf("A.Allocate(%d): %v", W, err)
	}
	t.Logf("ledger's first range [1, %d]; B got %v; A got %v", W, bRange, aRange)
	if aRange.First <= bRange.Last && bRange.First <= aRange.Last {
		t.Errorf("A's block %v overlaps B's %v", aRange, bRange)
	}
	if aRange.First <= W && aRange.Last > W {
		t.Errorf("A's block %v runs past the range [1, %d] the ledger reserved for it", aRange, W)
	}

	// Redis loses its data: the ledger's next range is above all it handed out.
	if err := srv.Client(t).FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	r, err := b.Allocate(ctx, "k", 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.First >= aRange.First && r.First <= aRange.Last || r.First >= bRange.First && r.First <= bRange.Last {
		t.Errorf("after FLUSHALL, Allocate returned %v, already issued in %v or %v: a repeat", r, aRange, bRange)
	}
}

// The Redis-only Allocator checks the epoch marker with a GET and then
// issues with a separate INCRBY. If Redis is flushed between the two, the
// Allocator that saw the old epoch issues from the empty counter: numbers
// it handed out before, without an error.
func TestAdversaryRedisOnlyEpochCheckRace(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.Persistent())
	admin := srv.Client(t)
	var flush atomic.Bool
	rdb := srv.Client(t)
	rdb.AddHook(advHook{after: func(ctx context.Context, cmd redis.Cmder) {
		args := cmd.Args()
		if len(args) == 2 && args[0] == "get" && flush.CompareAndSwap(true, false) {
			admin.FlushAll(ctx) // Redis restarted empty, right after the epoch check
		}
	}})
	a := must(redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{}))
	first, err := a.Allocate(ctx, "k", 10)
	if err != nil {
		t.Fatal(err)
	}
	second, err := a.Allocate(ctx, "k", 10) // epoch checked with GET from here on
	if err != nil {
		t.Fatal(err)
	}
	flush.Store(true)
	third, err := a.Allocate(ctx, "k", 10)
	t.Logf("%v %v then %v, %v", first, second, third, err)
	if err == nil && third.First <= second.Last {
		t.Errorf("after Redis lost its data between the epoch check and INCRBY, Allocate returned %v again (already issued %v, %v) with no error", third, first, second)
	}
}

// On a Redis Cluster, the epoch marker (sn:{}:epoch) lives on one master
// and each counter on the master of its own slot. A master that loses its
// data (restarted empty, or FLUSHALL sent to it, which on a cluster reaches
// one node) resets the counters it holds while the marker, elsewhere,
// stays: the Redis-only Allocator issues the same numbers again.
func TestAdversaryRedisOnlyClusterShardLoss(t *testing.T) {
	ctx := context.Background()
	cl := redistest.StartCluster(t)
	// Every master fsyncs every write, so the persistence check passes.
	for _, addr := range cl.Addrs() {
		n := redis.NewClient(&redis.Options{Addr: addr})
		if err := n.ConfigSet(ctx, "appendonly", "yes").Err(); err != nil {
			t.Fatal(err)
		}
		if err := n.ConfigSet(ctx, "appendfsync", "always").Err(); err != nil {
			t.Fatal(err)
		}
		n.Close()
	}
	rdb := cl.Client(t)
	a := must(redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{}))
	// A key whose master does not hold the epoch marker.
	epochKey := "sn:{}:epoch"
	var key string
	for i := range 100 {
		k := "k" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		ke, _ := rdb.MasterForKey(ctx, epochKey)
		kk, _ := rdb.MasterForKey(ctx, a.Key(k))
		if ke.Options().Addr != kk.Options().Addr {
			key = k
			break
		}
	}
	first, err := a.Allocate(ctx, key, 5)
	if err != nil {
		t.Fatal(err)
	}
	node, err := rdb.MasterForKey(ctx, a.Key(key))
	if err != nil {
		t.Fatal(err)
	}
	if err := node.FlushAll(ctx).Err(); err != nil { // that master loses its data
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	second, err := a.Allocate(ctx, key, 5)
	t.Logf("%v then %v, %v", first, second, err)
	if err == nil && second.First <= first.Last {
		t.Errorf("after the counter's master lost its data, Allocate returned %v again (already issued %v) with no error", second, first)
	}
}

// A block of more than 2^53 numbers that a double cannot hold: the exact
// take script hands want back as a Lua number, rounded, so a healthy key is
// reported corrupt, and the range is consumed (cur moves on) each time.
func TestAdversaryExactTakeBigBlockMisreported(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	a := must(redisseq.NewAllocator(rdb, sequence.NewMemoryAllocator(), redisseq.AllocatorOptions{}))
	const n = int64(1)<<53 + 1
	r, err := a.Allocate(ctx, "big", n)
	if err != nil || r != (sequence.Range{First: 1, Last: n}) {
		t.Errorf("Allocate(2^53+1) on a fresh key = %v, %v; want [1, %d]", r, err, n)
	}
}

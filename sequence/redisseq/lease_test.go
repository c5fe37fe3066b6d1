package redisseq_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/snowflake"
)

// tiny is a layout with two worker ids, so that tests run out of them.
var tiny = snowflake.Layout{TimeBits: 44, WorkerBits: 1, SeqBits: 8, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}

func TestLeaserConformance(t *testing.T) {
	rdb := redistest.Start(t, redistest.Persistent()).Client(t)
	l := must(redisseq.NewLeaser(rdb, redisseq.LeaserOptions{}))
	sequencetest.Run(t, func(t *testing.T) sequence.Gen {
		g, err := snowflake.New(t.Context(), snowflake.Twitter, snowflake.Options{Leaser: l, TTL: 3 * time.Second}) // a fresh id waits one TTL: not the default 10s
		if err != nil {
			t.Fatal(err)
		}
		return g
	})
}

func TestLeaserRefusesUnsafeRedis(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	_, err := snowflake.New(t.Context(), snowflake.Twitter, snowflake.Options{Leaser: must(redisseq.NewLeaser(rdb, redisseq.LeaserOptions{}))})
	if !errors.Is(err, redisseq.ErrUnsafe) {
		t.Errorf("a Redis without appendfsync always: %v; want ErrUnsafe", err)
	}
}

// The promises of every Leaser (sequencetest.RunLeaser).
func TestLeaser(t *testing.T) {
	rdb := redistest.Start(t, redistest.Persistent()).Client(t)
	sequencetest.RunLeaser(t, func(t *testing.T, name string) snowflake.Leaser {
		return must(redisseq.NewLeaser(rdb, redisseq.LeaserOptions{Name: name}))
	}, 300*time.Millisecond)
}

// A holder that issued nothing releases its id with the zero bound (as
// snowflake.New does when its first renewal fails): the bound its earlier
// holders recorded stays, for the next holder to issue after.
func TestLeaserReleaseKeepsBound(t *testing.T) {
	ctx := t.Context()
	l := must(redisseq.NewLeaser(redistest.Start(t, redistest.Persistent()).Client(t), redisseq.LeaserOptions{}))
	first, err := l.Lease(ctx, snowflake.Layout{TimeBits: 41, SeqBits: 12, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	bound := time.Now().Add(time.Hour).Round(0)
	if err := first.Release(ctx, bound); err != nil {
		t.Fatal(err)
	}
	idle, err := l.Lease(ctx, snowflake.Layout{TimeBits: 41, SeqBits: 12, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !idle.Bound().Equal(bound) {
		t.Fatalf("the second holder found bound %v; want %v", idle.Bound(), bound)
	}
	if err := idle.Release(ctx, time.Time{}); err != nil {
		t.Fatal(err)
	}
	third, err := l.Lease(ctx, snowflake.Layout{TimeBits: 41, SeqBits: 12, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Release(ctx, time.Time{})
	if !third.Bound().Equal(bound) {
		t.Errorf("after a holder that issued nothing released the id, the bound is %v; want %v", third.Bound(), bound)
	}
}

// A Gen cut off from Redis (its client closed) stops issuing; the one
// that takes its id issues above it (sequencetest.RunLeaserTakeover).
func TestLeaserTakeover(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	rdb := srv.Client(t)
	sequencetest.RunLeaserTakeover(t, func(t *testing.T, name string) snowflake.Leaser {
		return must(redisseq.NewLeaser(rdb, redisseq.LeaserOptions{Name: name}))
	}, func(t *testing.T, name string) (snowflake.Leaser, func()) {
		cut := srv.Client(t)
		return must(redisseq.NewLeaser(cut, redisseq.LeaserOptions{Name: name})), func() { cut.Close() }
	}, 400*time.Millisecond)
}

// The scripts of release e791946, the last that kept worker ids in keys
// of their own: its lease (shortened to what a fence must stop: the
// layout's check, then the take) and its renewal.
var (
	releaseLease = redis.NewScript(`
local p = ARGV[1]
local lay = redis.call('GET', p .. 'layout')
if lay and lay ~= ARGV[2] then
	return redis.error_reply('LAYOUT ' .. lay)
end
return redis.call('SET', p .. 'lease:' .. ARGV[3], 'old', 'NX', 'PX', 60000)
`)
	releaseRenew = redis.NewScript(`
if redis.call('GET', KEYS[3]) ~= ARGV[4] then return -1 end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local b = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[3]) > b then redis.call('SET', KEYS[2], ARGV[3]) end
return 1
`)
)

// TestMigrateWorkers opens a Redis whose worker ids release e791946 kept
// in keys of their own: a live holder of id 0, its lease expiring in 2s,
// and id 1, released with a bound; their layout, epoch marker and free
// ids. Three Leasers lease at once, each moving them. Then a Lease in
// another layout is refused, and one in the layout takes id 1 first,
// with its bound; id 0 stays held for what was left of its expiry and a
// second, and is then leased with the bound its holder renewed to; the
// release's renewal, run by a process of it still running, fails (its
// lease is lost), and its lease refuses. The control: before the move,
// the release's renewal renews and its lease takes an id.
func TestMigrateWorkers(t *testing.T) {
	ctx := t.Context()
	rdb := redistest.Start(t, redistest.Persistent()).Client(t)
	p := "sn:{worker:snowflake}:"
	live, released := time.Now().Add(time.Hour).UnixNano(), time.Now().Add(2*time.Hour).UnixNano()
	for k, v := range map[string]any{"layout": tiny.String(), "epoch": "e1", "bound:0": live, "bound:1": released} {
		if err := rdb.Set(ctx, p+k, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.Set(ctx, p+"lease:0", "live", 2*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.SAdd(ctx, p+"free", 1).Err(); err != nil {
		t.Fatal(err)
	}
	renew := func(bound int64) int64 {
		n, err := releaseRenew.Run(ctx, rdb, []string{p + "lease:0", p + "bound:0", p + "epoch"}, "live", 2000, bound, "e1").Int64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	live += int64(time.Second) // Lua compares in doubles: a step it sees
	if n := renew(live); n != 1 {
		t.Fatalf("control: the release's renewal before the move returned %d, want 1", n)
	}
	if ok, err := releaseLease.Run(ctx, rdb, []string{p}, p, tiny.String(), 7).Result(); err != nil || ok != "OK" {
		t.Fatalf("control: the release's lease before the move: %v, %v", ok, err)
	}
	rdb.Del(ctx, p+"lease:7")
	var wg sync.WaitGroup
	ls := make([]*redisseq.Leaser, 3)
	for i := range ls {
		ls[i] = must(redisseq.NewLeaser(rdb, redisseq.LeaserOptions{}))
		wg.Go(func() {
			// Another layout: refused, after the move.
			if _, err := ls[i].Lease(ctx, snowflake.Twitter, time.Minute); !errors.Is(err, snowflake.ErrLayout) {
				t.Errorf("a Lease in another layout than the release's: %v; want ErrLayout", err)
			}
		})
	}
	wg.Wait()
	if n := renew(live + int64(time.Second)); n > 0 {
		t.Errorf("the release's renewal after the move returned %d: its lease is not lost", n)
	}
	if _, err := releaseLease.Run(ctx, rdb, []string{p}, p, tiny.String(), 7).Result(); err == nil || !strings.Contains(err.Error(), "upgrade every process") {
		t.Errorf("the release's lease after the move: %v; want refused, saying to upgrade", err)
	}
	one, err := ls[0].Lease(ctx, tiny, time.Minute)
	if err != nil || one.Worker() != 1 || one.Bound().UnixNano() != released {
		t.Fatalf("first Lease: %v; want id 1, released, with its bound %d", err, released)
	}
	if _, err := ls[1].Lease(ctx, tiny, time.Minute); !errors.Is(err, sequence.ErrUnavailable) {
		t.Fatalf("a Lease while the release holder's lease runs: %v; want ErrUnavailable", err)
	}
	var zero snowflake.Lease
	for deadline := time.Now().Add(15 * time.Second); zero == nil; time.Sleep(100 * time.Millisecond) {
		if zero, err = ls[2].Lease(ctx, tiny, time.Minute); err != nil && time.Now().After(deadline) {
			t.Fatalf("id 0 never came free: %v", err)
		}
	}
	if zero.Worker() != 0 || zero.Bound().UnixNano() != live {
		t.Errorf("after its expiry: id %d with bound %d; want id 0 with the bound its holder renewed to, %d", zero.Worker(), zero.Bound().UnixNano(), live)
	}
	// Redis loses everything, fence included (FLUSHALL): a process of the
	// release leases id 0 again before any Lease here. The next Lease, of
	// a Leaser that leased before, fences again and passes id 0 by.
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if ok, err := releaseLease.Run(ctx, rdb, []string{p}, p, tiny.String(), 0).Result(); err != nil || ok != "OK" {
		t.Fatalf("the release's lease after FLUSHALL: %v, %v", ok, err)
	}
	if got, err := ls[0].Lease(ctx, tiny, time.Minute); err != nil || got.Worker() != 1 {
		t.Errorf("a Lease after FLUSHALL, beside the release's holder of id 0: %v, %v; want id 1", got, err)
	}
	if _, err := ls[1].Lease(ctx, tiny, time.Minute); !errors.Is(err, sequence.ErrUnavailable) {
		t.Errorf("a second Lease after FLUSHALL: %v; want ErrUnavailable (id 0 is the release's)", err)
	}
	if _, err := releaseLease.Run(ctx, rdb, []string{p}, p, tiny.String(), 1).Result(); err == nil {
		t.Error("the release leased again after the fence was put back")
	}
}

package redisseq

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence"
)

// ErrUnsafe means a Redis that an Allocator without a ledger (or a
// Leaser) would keep its counters (or bounds) in can lose writes it
// acknowledged: it does not fsync every write to an append-only file, or
// it may evict keys (a maxmemory-policy other than noeviction). Numbers
// would repeat after a crash or an eviction.
var ErrUnsafe = errors.New("redisseq: Redis may lose counters")

// onlyRedis is what an Allocator without a ledger checks: the servers'
// persistence, once, and, per counter, the epoch marker it saw.
type onlyRedis struct {
	mu      sync.Mutex
	checked time.Time // when the servers' settings were last read
	epochs  sync.Map  // Redis key of a counter -> the epoch seen with it
	expires sync.Map  // Redis key of a counter -> when it may expire (see Allocator.Expire)
	// migrated says the catalog of an earlier release was moved into the
	// records (see migrate.go), or that there was none; migrateMu lets one
	// goroutine move it while the others wait.
	migrated  atomic.Bool
	migrateMu sync.Mutex
}

// check refuses servers that may lose writes.
func (o *onlyRedis) check(ctx context.Context, a *Allocator, op, rkey string) error {
	return o.checkClient(ctx, a.rdb, op, rkey)
}

// recheck is how often a process that keeps counters in Redis alone reads
// the servers' settings again: a server whose appendfsync or eviction
// policy changed while the process runs (CONFIG SET, a restart with
// another config, a failover to a replica configured otherwise) is
// refused within that time.
var recheck = time.Second

// checkClient refuses a server behind rdb that may lose writes: at the
// first call, and again once recheck has passed since the last reading.
func (o *onlyRedis) checkClient(ctx context.Context, rdb redis.UniversalClient, op, rkey string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.checked.IsZero() && time.Since(o.checked) < recheck {
		return nil
	}
	if err := persistence(ctx, rdb, op, rkey); err != nil {
		o.checked = time.Time{}
		return err
	}
	o.checked = time.Now()
	return nil
}

// allocOnlyScript raises the counter KEYS[1] by ARGV[1] and returns {last,
// epoch}, last as a string (exact in int64). Next to the counter, in its
// hash slot, KEYS[1]..":epoch" holds a random marker, set with the first
// increment. When ARGV[2] is not empty it is the marker this process saw
// before: a marker gone or changed means the server (or the shard holding
// the counter) lost its data, and the script refuses before incrementing,
// in the same atomic step.
var allocOnlyScript = redis.NewScript(`
local ek = KEYS[1] .. ':epoch'
local e = redis.call('GET', ek)
if ARGV[2] ~= '' and e ~= ARGV[2] then
	return redis.error_reply('EPOCH the epoch marker ' .. ek .. ' is gone or changed')
end
if not e then
	e = ARGV[3]
	redis.call('SET', ek, e)
end
redis.call('INCRBY', KEYS[1], ARGV[1])
return {redis.call('GET', KEYS[1]), e}
`)

// allocate increments key's counter, checking and remembering its epoch.
func (o *onlyRedis) allocate(ctx context.Context, a *Allocator, rkey string, n int64) (int64, error) {
	want := ""
	if d, ok := o.expires.Load(rkey); ok && !time.Now().Before(d.(time.Time)) {
		// The counter may have expired, its marker with it: that is not
		// a loss of data.
		o.epochs.Delete(rkey)
		o.expires.Delete(rkey)
	}
	if e, ok := o.epochs.Load(rkey); ok {
		want = e.(string)
	}
	var b [16]byte
	rand.Read(b[:])
	res, err := a.replicas.script(ctx, a.rdb, allocOnlyScript, rkey, n, want, hex.EncodeToString(b[:])).Slice()
	if err != nil {
		if strings.Contains(err.Error(), "EPOCH") {
			return 0, newError(sequence.ErrRegressed, err, "Allocate key %s: Redis lost its data (it restarted empty or was flushed): its counter may be behind numbers already issued; raise its floor, then start a new Allocator", rkey)
		}
		return 0, classify("Allocate", rkey, err)
	}
	if len(res) != 2 {
		return 0, newError(ErrCorrupt, nil, "key %s: the allocation script returned %v", rkey, res)
	}
	last, _ := res[0].(string)
	epoch, _ := res[1].(string)
	v, perr := strconv.ParseInt(last, 10, 64)
	if perr != nil || epoch == "" {
		return 0, newError(ErrCorrupt, nil, "key %s holds a corrupt value: the allocation script returned %v", rkey, res)
	}
	o.epochs.Store(rkey, epoch)
	return v, nil
}

// persistence asks the server, or every master of a cluster, whether it
// fsyncs every write and never evicts keys. A server that refuses CONFIG
// (managed services often rename it) is trusted.
func persistence(ctx context.Context, rdb redis.UniversalClient, op, rkey string) error {
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			return persistence(ctx, c, op, rkey)
		})
	}
	cfg, err := rdb.ConfigGet(ctx, "append*").Result()
	if err == nil {
		var policy map[string]string
		if policy, err = rdb.ConfigGet(ctx, "maxmemory-policy").Result(); err == nil {
			cfg["maxmemory-policy"] = policy["maxmemory-policy"]
		}
	}
	if err != nil {
		if strings.Contains(strings.ToLower(err.Error()), "unknown command") || strings.Contains(err.Error(), "NOPERM") {
			return nil
		}
		return classify(op, rkey, err)
	}
	if cfg["appendonly"] != "yes" || cfg["appendfsync"] != "always" {
		return fmt.Errorf("%w: it runs with appendonly %s and appendfsync %s; without a ledger, Redis must run with appendonly yes and appendfsync always (or give the Allocator a ledger)",
			ErrUnsafe, cfg["appendonly"], cfg["appendfsync"])
	}
	if p := cfg["maxmemory-policy"]; p != "noeviction" {
		return fmt.Errorf("%w: it runs with maxmemory-policy %s, so it may evict a counter or a bound, which would then start again; without a ledger, Redis must run with maxmemory-policy noeviction (or give the Allocator a ledger)",
			ErrUnsafe, p)
	}
	return nil
}

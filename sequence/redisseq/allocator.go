package redisseq

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence"
)

// AllocatorOptions configures an [Allocator]. The zero value is ready to use.
type AllocatorOptions struct {
	// Prefix starts every Redis key of the Allocator; see the package
	// comment for the layout. Braces and "%" in it are percent-escaped like
	// counter keys, so it cannot break a hash tag.
	// default: [DefaultPrefix], "sn:".
	Prefix string

	// Chunk is how many numbers a refill reserves from the ledger, at
	// least: a block larger than Chunk reserves the block. The ledger sees
	// one call per Chunk numbers. Not used without a ledger.
	// default: [DefaultChunk], 100000.
	Chunk int64

	// Replicas is how many replicas must have each block before Allocate
	// returns it (Redis's WAIT, sent in the same round trip). Replication
	// is asynchronous, so without it a failover to a replica that lagged
	// behind hands out blocks again. Set it to the number of replicas a
	// failover may promote.
	// default: 0, do not wait.
	Replicas int

	// ReplicaTimeout bounds the wait for Replicas. A block that too few
	// replicas acknowledged in time is not used (a gap), and Allocate
	// returns an error wrapping [sequence.ErrUnavailable].
	// Keep it below the client's ReadTimeout, which bounds the whole round
	// trip.
	// default: [DefaultReplicaTimeout], 1s.
	ReplicaTimeout time.Duration
}

// DefaultChunk is the default of [AllocatorOptions.Chunk].
const DefaultChunk = 100_000

// Allocator is a [sequence.Allocator] that serves blocks from Redis, in
// front of a ledger: a durable Allocator that every machine shares
// (package sqlseq's Store, in production). Redis holds per key a range
// reserved from the ledger, and Allocate takes a block from it with one
// script call, so one round trip per block, atomic across every process
// sharing the Redis. When the range is missing or too short for the block,
// one caller takes the key's lock and reserves the next chunk from the
// ledger, above everything it ever handed out; a range is only installed
// above the one in Redis. So if Redis loses its data — an empty restart,
// FLUSHALL, a failover to a replica that lagged — the next block comes from
// the ledger: a gap, never a repeat, in any process on any machine. The
// ledger sees one call per [AllocatorOptions.Chunk] numbers.
//
// The ledger must be shared by every machine that shares the Redis: a
// per-machine store (a bbolt file) behind a shared Redis repeats numbers
// after Redis loses its data, since each machine's store knows only its
// own ranges. Use one only when a single host uses the Redis.
//
// Put a [sequence.Segment] in front of it to issue numbers from memory.
//
// An Allocator is safe for concurrent use and implements
// [sequence.Floorer]. It works with a single Redis, Sentinel and Redis
// Cluster alike. It holds no resource of its own; closing the client and
// the ledger is the caller's business.
type Allocator struct {
	rdb      redis.UniversalClient
	prefix   string
	replicas replicas
	core     *Counter // with a ledger: the ranges and their refills
	only     *onlyRedis
}

// NewAllocator returns an Allocator that serves blocks from ranges in c,
// reserved from ledger. A nil c or ledger is an error wrapping
// [sequence.ErrInvalidArgument]; for an Allocator without a ledger, see
// [NewRedisOnlyAllocator].
func NewAllocator(c redis.UniversalClient, ledger sequence.Allocator, o AllocatorOptions) (*Allocator, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: redisseq.NewAllocator with a nil client", sequence.ErrInvalidArgument)
	}
	if ledger == nil {
		return nil, fmt.Errorf("%w: redisseq.NewAllocator with a nil ledger (NewRedisOnlyAllocator keeps counters in Redis alone)", sequence.ErrInvalidArgument)
	}
	if o.Chunk < 1 {
		o.Chunk = DefaultChunk
	}
	core, err := NewCounter(c, ledger, CounterOptions{Prefix: o.Prefix, Step: o.Chunk, Replicas: o.Replicas, ReplicaTimeout: o.ReplicaTimeout})
	if err != nil {
		return nil, err
	}
	return &Allocator{rdb: c, prefix: core.prefix, replicas: core.replicas, core: core}, nil
}

// NewRedisOnlyAllocator returns an Allocator that keeps one counter per
// key in Redis alone, a string holding the last number reserved: Allocate
// is one INCRBY. It is an explicit choice, for a Redis that never loses a
// write it acknowledged: run with appendonly yes and appendfsync always
// (and no RDB restore of an older snapshot), and, with replicas, set
// [AllocatorOptions.Replicas] to at least 1 so that every block waits for
// them. A Redis that comes back empty, or older, hands out numbers again.
//
// The Allocator checks what it can. At its first call it asks the server
// for its persistence (CONFIG GET) and refuses, with an error wrapping
// [ErrUnsafe], a server that does not fsync every write; a server that
// hides CONFIG is trusted (on a cluster, every master is asked). Next to
// each counter, in its hash slot, it writes an epoch marker, and each
// allocation checks in the same script that the marker this process saw is
// still there: once it has gone or changed (the server, or the shard
// holding the counter, restarted empty or was flushed), Allocate refuses
// with an error wrapping [sequence.ErrRegressed] and changes nothing. A
// process that first sees a counter after the data was lost cannot tell;
// only a ledger ([NewAllocator]) covers that.
//
// A nil c is an error wrapping [sequence.ErrInvalidArgument].
func NewRedisOnlyAllocator(c redis.UniversalClient, o AllocatorOptions) (*Allocator, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: redisseq.NewRedisOnlyAllocator with a nil client", sequence.ErrInvalidArgument)
	}
	prefix := prefixOrDefault(o.Prefix)
	return &Allocator{rdb: c, prefix: prefix, replicas: newReplicas(o.Replicas, o.ReplicaTimeout), only: &onlyRedis{}}, nil
}

// Key returns the Redis key that holds the counter of key (without a
// ledger) or its range (with one).
func (a *Allocator) Key(key string) string {
	if a.core != nil {
		return a.core.Key(key)
	}
	return redisKey(a.prefix, key, "")
}

// Allocate reserves the n numbers after the last one reserved for key. The
// first Range of a new key starts at 1 (with a ledger: at the ledger's
// first number).
//
// It returns an error wrapping [sequence.ErrInvalidArgument] if n < 1,
// [sequence.ErrExhausted] if fewer than n numbers are left below
// math.MaxInt64, [sequence.ErrUnavailable] if Redis or the ledger cannot be
// reached (or too few replicas acknowledged the block in time),
// [ErrWrongType] or [ErrCorrupt] if the key holds something else, and,
// without a ledger, [ErrUnsafe] or [sequence.ErrRegressed] as described on
// [NewRedisOnlyAllocator].
func (a *Allocator) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	rkey := a.Key(key)
	if n < 1 {
		return sequence.Range{}, newError(sequence.ErrInvalidArgument, nil, "Allocate key %s: n is %d, want n >= 1", rkey, n)
	}
	if err := ctx.Err(); err != nil {
		return sequence.Range{}, classify("Allocate", rkey, err)
	}
	if a.core != nil {
		return a.allocateLedgered(ctx, key, n)
	}
	if err := a.only.check(ctx, a, "Allocate", rkey); err != nil {
		return sequence.Range{}, err
	}
	last, err := a.only.allocate(ctx, a, rkey, n)
	if err != nil {
		return sequence.Range{}, err
	}
	r := sequence.Range{First: last - n + 1, Last: last}
	if r.First < 1 {
		return sequence.Range{}, newError(ErrCorrupt, nil, "key %s holds a corrupt value: INCRBY %d returned %d, so the counter was negative", rkey, n, last)
	}
	return r, nil
}

// allocateLedgered takes n consecutive numbers from key's range, refilling
// it from the ledger when it is missing or too short.
func (a *Allocator) allocateLedgered(ctx context.Context, key string, n int64) (sequence.Range, error) {
	k := counterKey{c: a.core, key: key, rangeKey: a.core.Key(key), exact: true}
	attempt := 0
	for {
		if err := ctx.Err(); err != nil {
			return sequence.Range{}, classify("Allocate", k.rangeKey, err)
		}
		take, last, err := k.take(ctx, n)
		if err == nil && take == 0 {
			take, last, err = k.refill(ctx, n, &attempt)
		}
		if err != nil {
			return sequence.Range{}, err
		}
		if take == n {
			return sequence.Range{First: last - n + 1, Last: last}, nil
		}
		if take != 0 {
			return sequence.Range{}, newError(ErrCorrupt, nil, "key %s: asked for %d numbers, the range gave %d", k.rangeKey, n, take)
		}
	}
}

// Floor raises key's counter to floor, so that every later Range starts
// above floor; with a ledger, the ledger's floor first. A floor at or below
// the counter is a no-op. It returns an error wrapping
// [sequence.ErrInvalidArgument] if floor < 0, and the errors of
// [Allocator.Allocate] otherwise.
func (a *Allocator) Floor(ctx context.Context, key string, floor int64) error {
	if a.core != nil {
		return a.core.Floor(ctx, key, floor)
	}
	rkey := a.Key(key)
	if floor < 0 {
		return newError(sequence.ErrInvalidArgument, nil, "Floor key %s: floor %d is negative", rkey, floor)
	}
	if err := ctx.Err(); err != nil {
		return classify("Floor", rkey, err)
	}
	if err := a.only.check(ctx, a, "Floor", rkey); err != nil {
		return err
	}
	// The floor's own key first, beside the counter: a return that
	// follows gives nothing back at or below it.
	if err := a.replicas.script(ctx, a.rdb, markScript, rkey+":floor", strconv.FormatInt(floor, 10)).Err(); err != nil {
		return classify("Floor", rkey, err)
	}
	err := a.replicas.script(ctx, a.rdb, markScript, rkey, strconv.FormatInt(floor, 10)).Err()
	return classify("Floor", rkey, err)
}

// String describes a for error messages.
func (a *Allocator) String() string {
	if a.core != nil {
		return fmt.Sprintf("redisseq.Allocator(prefix %q, ledger %T)", a.prefix, a.core.durable)
	}
	return fmt.Sprintf("redisseq.Allocator(prefix %q, Redis only)", a.prefix)
}

// luaInt defines, for the scripts below, canon(s): whether s is a
// non-negative integer as Redis writes it (no sign, no leading zero, at most
// math.MaxInt64), and cmp(a, b) for two such strings. Lua numbers are
// doubles, exact only up to 2^53, so big counters are compared as strings:
// by length, then byte by byte.
const luaInt = `
local function cmp(a, b)
	if #a ~= #b then
		if #a < #b then return -1 end
		return 1
	end
	for i = 1, #a do
		local x, y = string.byte(a, i), string.byte(b, i)
		if x ~= y then
			if x < y then return -1 end
			return 1
		end
	end
	return 0
end
local function canon(s)
	if s == '0' then return true end
	if not string.match(s, '^[1-9]%d*$') or #s > 19 then return false end
	return cmp(s, '9223372036854775807') <= 0
end
`

// markScript raises the string counter KEYS[1] to ARGV[1] (a canonical
// non-negative integer) unless it is already at or above it, and returns
// the counter as a string (exact in int64). Floor and Mark both run it.
var markScript = redis.NewScript(luaInt + `
local cur = redis.call('GET', KEYS[1])
if cur and not canon(cur) then
	return redis.error_reply('CORRUPT counter is ' .. string.format('%q', string.sub(cur, 1, 40)))
end
if not cur or cmp(cur, ARGV[1]) < 0 then
	redis.call('SET', KEYS[1], ARGV[1])
	return ARGV[1]
end
return cur
`)

// returnRangeScript lowers cur of the range KEYS[1] from ARGV[2] to ARGV[1]
// when it is ARGV[2] still and the range is of the ledger ARGV[3] (or "")
// and of this server's boot, and no floor above ARGV[1] was raised, and
// returns 1, appending ARGV[4] (the numbers back with the cache) to the
// list of grants KEYS[2]; otherwise 0.
var returnRangeScript = redis.NewScript(luaInt + ledgerCheck + `
local v = redis.call('HMGET', KEYS[1], 'cur', 'max', 'ledger', 'boot', 'floor')
if not ledger_ok(v, ARGV[3]) or v[1] ~= ARGV[2] or not v[2] or v[4] ~= boot() then
	return 0
end
if v[5] and canon(v[5]) and cmp(v[5], ARGV[1]) > 0 then
	return 0
end
redis.call('HSET', KEYS[1], 'cur', ARGV[1])
if KEYS[2] then
	redis.call('RPUSH', KEYS[2], ARGV[4])
end
return 1
`)

// returnOnlyScript lowers the counter KEYS[1] from ARGV[2] to ARGV[1] when
// it is ARGV[2] still, its epoch marker is ARGV[3] and no floor above
// ARGV[1] was raised (KEYS[1]..":floor", see Allocator.Floor), and returns
// 1; otherwise 0.
var returnOnlyScript = redis.NewScript(luaInt + `
if redis.call('GET', KEYS[1] .. ':epoch') ~= ARGV[3] or redis.call('GET', KEYS[1]) ~= ARGV[2] then
	return 0
end
local f = redis.call('GET', KEYS[1] .. ':floor')
if f and canon(f) and cmp(f, ARGV[1]) > 0 then
	return 0
end
redis.call('SET', KEYS[1], ARGV[1])
return 1
`)

// Return hands back the numbers r when they are the last reserved for key
// and no process reserved any since (a [sequence.Returner]): with a
// ledger, to key's range in Redis, which serves them again; without one,
// to the counter, when its epoch marker is the one this process saw.
func (a *Allocator) Return(ctx context.Context, key string, r sequence.Range) (bool, error) {
	rkey := a.Key(key)
	if r.First < 1 || r.Len() == 0 {
		return false, newError(sequence.ErrInvalidArgument, nil, "Return key %s: the empty range %v", rkey, r)
	}
	first, last := strconv.FormatInt(r.First-1, 10), strconv.FormatInt(r.Last, 10)
	var n int64
	var err error
	if a.core != nil {
		rk := a.core.Key(key)
		ledger, lerr := a.core.ledgerID(ctx, rk)
		if lerr != nil {
			return false, lerr
		}
		keys := []string{rk, a.core.grantsKey(key)}
		if key == "" {
			keys = keys[:1] // "{}" is no hash tag: the list is not in the range's slot
		}
		n, err = a.replicas.scriptKeys(ctx, a.rdb, returnRangeScript, keys, first, last, ledger,
			strconv.FormatInt(r.Len(), 10)+" "+last+" "+a.core.cacheName()).Int64()
		return n == 1, classify("Return", rk, err)
	}
	e, ok := a.only.epochs.Load(rkey)
	if !ok {
		return false, nil
	}
	n, err = a.replicas.script(ctx, a.rdb, returnOnlyScript, rkey, first, last, e.(string)).Int64()
	return n == 1, classify("Return", rkey, err)
}

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

// Allocator is a [sequence.Allocator] that keeps one counter per key in
// Redis, a string holding the last number reserved. Allocate is one INCRBY,
// so one round trip per block, atomic across every process sharing the
// Redis, and exact over the whole int64 range. Put a [sequence.Segment] in
// front of it to issue numbers from memory.
//
// The counters live only in Redis: if Redis loses them (a restart without
// persistence, a failover to a replica that lagged), Allocate starts again
// below numbers already issued. A Segment refuses such blocks with
// [sequence.ErrRegressed]; to survive data loss without an error, use a
// [Counter] over a durable allocator instead, or run Redis with appendfsync
// always.
//
// An Allocator is safe for concurrent use and implements [sequence.Floorer].
// It works with a single Redis, Sentinel and Redis Cluster alike. It holds
// no resource of its own; closing the client is the caller's business.
type Allocator struct {
	rdb      redis.UniversalClient
	prefix   string
	replicas replicas
}

// NewAllocator returns an Allocator that keeps its counters in c.
func NewAllocator(c redis.UniversalClient, opts *AllocatorOptions) *Allocator {
	if c == nil {
		panic("redisseq: NewAllocator with a nil client")
	}
	var o AllocatorOptions
	if opts != nil {
		o = *opts
	}
	return &Allocator{rdb: c, prefix: prefixOrDefault(o.Prefix), replicas: newReplicas(o.Replicas, o.ReplicaTimeout)}
}

// Key returns the Redis key that holds the counter of key.
func (a *Allocator) Key(key string) string { return redisKey(a.prefix, key, "") }

// Allocate reserves the n numbers after the last one reserved for key, with
// one INCRBY. The first Range of a new key starts at 1.
//
// It returns an error wrapping [sequence.ErrInvalidArgument] if n < 1,
// [sequence.ErrExhausted] if fewer than n numbers are left below
// math.MaxInt64 (the counter is left as it was), [sequence.ErrUnavailable]
// if Redis cannot be reached (or too few replicas acknowledged the block in
// time), [ErrWrongType] or [ErrCorrupt] if the key
// holds something else than a counter.
func (a *Allocator) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	rkey := a.Key(key)
	if n < 1 {
		return sequence.Range{}, newError(sequence.ErrInvalidArgument, nil, "Allocate key %s: n is %d, want n >= 1", rkey, n)
	}
	if err := ctx.Err(); err != nil {
		return sequence.Range{}, classify("Allocate", rkey, err)
	}
	last, err := a.replicas.incrBy(ctx, a.rdb, rkey, n).Result()
	if err != nil {
		return sequence.Range{}, classify("Allocate", rkey, err)
	}
	r := sequence.Range{First: last - n + 1, Last: last}
	if r.First < 1 {
		return sequence.Range{}, newError(ErrCorrupt, nil, "key %s holds a corrupt value: INCRBY %d returned %d, so the counter was negative", rkey, n, last)
	}
	return r, nil
}

// Floor raises key's counter to floor, so that every later Range starts
// above floor. A floor at or below the counter is a no-op. It returns an
// error wrapping [sequence.ErrInvalidArgument] if floor < 0, and the errors
// of [Allocator.Allocate] otherwise.
func (a *Allocator) Floor(ctx context.Context, key string, floor int64) error {
	rkey := a.Key(key)
	if floor < 0 {
		return newError(sequence.ErrInvalidArgument, nil, "Floor key %s: floor %d is negative", rkey, floor)
	}
	if err := ctx.Err(); err != nil {
		return classify("Floor", rkey, err)
	}
	err := a.replicas.script(ctx, a.rdb, floorScript, rkey, strconv.FormatInt(floor, 10)).Err()
	return classify("Floor", rkey, err)
}

// String describes a for error messages.
func (a *Allocator) String() string { return fmt.Sprintf("redisseq.Allocator(prefix %q)", a.prefix) }

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

// floorScript raises the string counter KEYS[1] to ARGV[1] (a canonical
// non-negative integer) unless it is already at or above it.
var floorScript = redis.NewScript(luaInt + `
local cur = redis.call('GET', KEYS[1])
if cur and not canon(cur) then
	return redis.error_reply('CORRUPT counter is ' .. string.format('%q', string.sub(cur, 1, 40)))
end
if not cur or cmp(cur, ARGV[1]) < 0 then
	redis.call('SET', KEYS[1], ARGV[1])
	return 1
end
return 0
`)

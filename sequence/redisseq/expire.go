package redisseq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence"
)

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

// expireScript sets the expiry of every key in KEYS to ARGV[1]
// milliseconds, or deletes them when it is 0.
var expireScript = redis.NewScript(`
for _, k in ipairs(KEYS) do
	if ARGV[1] == '0' then
		redis.call('DEL', k)
	else
		redis.call('PEXPIRE', k, ARGV[1])
	end
end
return 1
`)

// Expire lets key's counter expire after ttl (a [sequence.Expirer]): with
// a ledger, its range in Redis and its row in the ledger, which must be an
// Expirer itself; without one, the counter and its epoch marker. A ttl
// rounded to 0 ms deletes them at once.
func (a *Allocator) Expire(ctx context.Context, key string, ttl time.Duration) error {
	if a.core != nil {
		return a.core.Expire(ctx, key, ttl)
	}
	rkey := a.Key(key)
	a.only.expires.Store(rkey, time.Now().Add(ttl)) // from then on, a missing marker is the expiry
	return expireKeys(ctx, a.rdb, "Expire", ttl, rkey, rkey+":epoch")
}

// Expire lets key's range in Redis and its row in the durable allocator,
// which must be a [sequence.Expirer], expire after ttl. The durable row
// goes first: a range left in Redis without its row is refilled from 1
// and refused as gone backwards, never issued twice.
func (c *Counter) Expire(ctx context.Context, key string, ttl time.Duration) error {
	e, ok := c.durable.(sequence.Expirer)
	if !ok {
		return fmt.Errorf("redisseq: Expire key %s: the durable allocator %T cannot expire keys: %w", c.Key(key), c.durable, errors.ErrUnsupported)
	}
	if err := e.Expire(ctx, key, ttl); err != nil {
		return durableError("expire", c.Key(key), c.durable, err)
	}
	return expireKeys(ctx, c.rdb, "Expire", ttl, c.Key(key))
}

// expireKeys sets the expiry of keys, which share a hash slot.
func expireKeys(ctx context.Context, rdb redis.UniversalClient, op string, ttl time.Duration, keys ...string) error {
	ms := max(ttl.Milliseconds(), 0)
	if ttl > 0 && ms == 0 {
		ms = 1
	}
	err := expireScript.Run(ctx, rdb, keys, strconv.FormatInt(ms, 10)).Err()
	return classify(op, keys[0], err)
}

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

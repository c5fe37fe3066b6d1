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
	now := time.Now()
	if d, ok := a.only.expires.Load(rkey); ok && !now.Before(d.(time.Time)) {
		// The deadline this replaces has passed: Redis may have deleted
		// the counter, its marker with it, already.
		a.only.epochs.Delete(rkey)
	}
	a.only.expires.Store(rkey, now.Add(ttl)) // from then on, a missing marker is the expiry
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

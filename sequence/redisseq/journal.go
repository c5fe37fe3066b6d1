package redisseq

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// Redis is a cache in front of the ledger: the journal and the claims of
// idempotency keys live in the ledger, which records each range Redis
// takes as reserved by the cache. A number voided, or released unused by
// a process at its close, is noted there; numbers in a range that Redis
// lost (a flush, a failover) stay open in an audit, bounded by the range,
// with the cause named.

// Journal returns the journals of the ledger, through the cache (see
// [journal.Holder]), or nil when the ledger keeps none: a void of a
// number the cache still serves is refused, and a read from a journal's
// start first records to whom the cache handed blocks.
func (c *Counter) Journal() journal.Keeper {
	j := journal.Of(c.durable)
	if j == nil {
		return nil
	}
	return cacheJournal{j, c}
}

// cacheJournal is the ledger's journals seen through the cache.
type cacheJournal struct {
	journal.Keeper
	c *Counter
}

// Note appends a record to key's journal in the ledger (see
// [journal.Keeper]). A void holds: a number still in the range Redis
// serves, which no process has taken yet, is refused (it would be issued
// afterwards, void), and once Redis has handed a voided number out, no
// Return gives it back to Redis; the ledger, in the same way, takes no
// Return of it.
func (j cacheJournal) Note(ctx context.Context, key string, e journal.Event) (journal.Event, error) {
	c := j.c
	// What the cache handed out first, so that a process's record (its
	// Closed) follows the blocks it was handed.
	if err := c.flush(ctx, key); err != nil {
		return journal.Event{}, err
	}
	if e.Kind == journal.Voided && e.Range.Last >= 1 {
		rkey := c.Key(key)
		res, err := c.replicas.script(ctx, c.rdb, voidScript, rkey, strconv.FormatInt(e.Range.Last, 10)).Slice()
		if err != nil {
			return journal.Event{}, classify("void", rkey, err)
		}
		if len(res) == 3 && res[0] == int64(0) {
			return journal.Event{}, fmt.Errorf("redisseq: void %v of key %q: numbers %v-%v are in the range Redis serves (%s), and no process has taken them yet: a number not issued cannot be voided: %w",
				e.Range, key, res[1], res[2], rkey, sequence.ErrInvalidArgument)
		}
	}
	return j.Keeper.Note(ctx, key, e)
}

// voidScript makes the number ARGV[1] of the range KEYS[1] stay used: when
// the range (of this server's boot) has not handed it out yet (cur <
// ARGV[1] <= max), it changes nothing and returns {0, cur+1, max};
// otherwise it raises the range's floor to ARGV[1], below which no Return
// (returnRangeScript) gives numbers back, and returns {1}.
var voidScript = redis.NewScript(luaInt + ledgerCheck + `
local v = redis.call('HMGET', KEYS[1], 'cur', 'max', 'boot', 'floor')
local n = ARGV[1]
for i = 1, 2 do
	if v[i] and not canon(v[i]) then
		return redis.error_reply('CORRUPT field ' .. ({'cur', 'max'})[i] .. ' is ' .. string.format('%q', string.sub(v[i], 1, 40)))
	end
end
if v[1] and v[2] and v[3] == boot() and cmp(v[1], n) < 0 and cmp(n, v[2]) <= 0 then
	redis.call('HSET', KEYS[1], 'tmp', v[1])
	local first = redis.call('HINCRBY', KEYS[1], 'tmp', 1)
	redis.call('HDEL', KEYS[1], 'tmp')
	return {0, first, v[2]}
end
if not v[4] or not canon(v[4]) or cmp(n, v[4]) > 0 then
	redis.call('HSET', KEYS[1], 'floor', n)
end
return {1}
`)

// Events reads key's journal in the ledger. Read from its start (after
// 0), it first records there to whom the cache handed blocks since the
// last refill, so that the journal read is complete.
func (j cacheJournal) Events(ctx context.Context, key string, after int64, limit int) ([]journal.Event, error) {
	if after == 0 {
		if err := j.c.flush(ctx, key); err != nil {
			return nil, err
		}
	}
	return j.Keeper.Events(ctx, key, after, limit)
}

// Journal returns the journals in the ledger, through the cache (see
// [Counter.Journal]), or nil without a ledger: a [journal.Holder].
func (a *Allocator) Journal() journal.Keeper {
	if a.core == nil {
		return nil
	}
	return a.core.Journal()
}

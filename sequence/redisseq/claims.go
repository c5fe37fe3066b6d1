package redisseq

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence"
)

// Without a ledger, the claims of idempotency keys live in Redis beside
// the counters, as durable as they are (an Allocator without a ledger
// refuses a Redis that does not fsync every write): one hash per key,
// prefix + "{claim:" + id + "}", with the fields of a [sequence.Memo],
// timed by the server's clock (TIME), so that processes whose clocks
// disagree agree on when a claim lapses. Every process sharing the Redis
// sees the same answers.

// claimKey is the Redis key, under prefix, of the claim of idempotency
// key id.
func claimKey(prefix, id string) string { return redisKey(prefix, "claim:"+id, "") }

// claimLinger is how long an unsettled claim stays after its lease, so
// that a call that settles late, when nobody took the key over, still
// records its answer (as the other stores do).
const claimLinger = 24 * time.Hour

// claimScript applies the rules of [sequence.Memo.Claim] to the claim
// KEYS[1] at the server's time: ARGV are the digest, the token, the lease
// and the linger, in microseconds. It returns {mine, digest, answer,
// until}, until in microseconds as a string.
var claimScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local m = redis.call('HMGET', KEYS[1], 'digest', 'token', 'answer', 'until', 'done')
if m[1] and m[4] and now < tonumber(m[4]) then
	local mine = 0
	if m[5] ~= '1' and m[2] == ARGV[2] then
		mine = 1
	end
	return {mine, m[1], m[3] or '', m[4]}
end
local untilus = now + tonumber(ARGV[3])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'digest', ARGV[1], 'token', ARGV[2], 'until', string.format('%d', untilus))
redis.call('PEXPIRE', KEYS[1], math.floor((tonumber(ARGV[3]) + tonumber(ARGV[4])) / 1000) + 1)
return {1, ARGV[1], '', string.format('%d', untilus)}
`)

// settleScript applies the rules of [sequence.Memo.Settle] to the claim
// KEYS[1]: ARGV are the token, the answer and the keep, in microseconds.
// It returns 1, or 0 when the claim was lost.
var settleScript = redis.NewScript(`
local m = redis.call('HMGET', KEYS[1], 'token', 'answer', 'done')
if m[3] == '1' and m[1] == ARGV[1] and m[2] == ARGV[2] then
	return 1
end
if not m[1] or m[3] == '1' or m[1] ~= ARGV[1] then
	return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('HSET', KEYS[1], 'answer', ARGV[2], 'until', string.format('%d', now + tonumber(ARGV[3])), 'done', '1')
redis.call('PEXPIRE', KEYS[1], math.floor(tonumber(ARGV[3]) / 1000) + 1)
return 1
`)

// claimOnly claims id in Redis (see [sequence.Replayer]).
func (a *Allocator) claimOnly(ctx context.Context, id, digest, token string, lease time.Duration) (sequence.Claim, error) {
	if err := a.only.check(ctx, a, "claim", claimKey(a.prefix, id)); err != nil {
		return sequence.Claim{}, err
	}
	return claimRedis(ctx, a.rdb, a.replicas, a.prefix, id, digest, token, lease)
}

// settleOnly records id's answer in Redis (see [sequence.Replayer]).
func (a *Allocator) settleOnly(ctx context.Context, id, token, answer string, keep time.Duration) error {
	return settleRedis(ctx, a.rdb, a.replicas, a.prefix, id, token, answer, keep)
}

// claimRedis claims id in the Redis behind rdb, under prefix.
func claimRedis(ctx context.Context, rdb redis.UniversalClient, rs replicas, prefix, id, digest, token string, lease time.Duration) (sequence.Claim, error) {
	if err := sequence.CheckClaim(id, ""); err != nil {
		return sequence.Claim{}, err
	}
	k := claimKey(prefix, id)
	res, err := rs.script(ctx, rdb, claimScript, k, digest, token, lease.Microseconds(), claimLinger.Microseconds()).Slice()
	if err != nil {
		return sequence.Claim{}, classify("claim", k, err)
	}
	if len(res) != 4 {
		return sequence.Claim{}, newError(ErrCorrupt, nil, "key %s: the claim script returned %v", k, res)
	}
	mine, _ := res[0].(int64)
	d, _ := res[1].(string)
	answer, _ := res[2].(string)
	us, _ := res[3].(string)
	until, err := strconv.ParseInt(us, 10, 64)
	if err != nil {
		return sequence.Claim{}, newError(ErrCorrupt, nil, "key %s holds the claim's time %q", k, us)
	}
	return sequence.Claim{Mine: mine == 1, Digest: d, Answer: answer, Until: sequence.FromMicros(until)}, nil
}

// settleRedis records id's answer in the Redis behind rdb, under prefix.
func settleRedis(ctx context.Context, rdb redis.UniversalClient, rs replicas, prefix, id, token, answer string, keep time.Duration) error {
	if err := sequence.CheckClaim(id, answer); err != nil {
		return err
	}
	k := claimKey(prefix, id)
	n, err := rs.script(ctx, rdb, settleScript, k, token, answer, keep.Microseconds()).Int64()
	if err != nil {
		return classify("settle", k, err)
	}
	if n != 1 {
		return sequence.ErrClaimLost
	}
	return nil
}

// Claim claims an idempotency key in the Leaser's Redis (see
// [sequence.Replayer]), for the ids of a snowflake Gen that leases its
// worker here: the claims live beside the leases, as durable as they are.
func (l *Leaser) Claim(ctx context.Context, id, digest, token string, lease time.Duration) (sequence.Claim, error) {
	return claimRedis(ctx, l.rdb, l.replicas, l.base, id, digest, token, lease)
}

// Settle records the answer of a claim in the Leaser's Redis.
func (l *Leaser) Settle(ctx context.Context, id, token, answer string, keep time.Duration) error {
	return settleRedis(ctx, l.rdb, l.replicas, l.base, id, token, answer, keep)
}

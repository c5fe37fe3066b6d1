package redisseq

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence/record"
)

// The records of an Allocator without a ledger (see package record), all
// in one hash slot, under a tag no counter key escapes to ("%records":
// an escaped key holds % only before 25, 7B or 7D):
//
//	P{%records}:v    hash  key -> value
//	P{%records}:n    hash  key -> version
//	P{%records}:i    zset  every key, score 0, for scans in byte order
//	P{%records}:seq  the last version given; the first is the server's
//	                 time in microseconds, so that versions after a
//	                 FLUSHALL are still none given before.

// Records returns where the Allocator keeps its records: its ledger's,
// or, without a ledger, Redis's own (whose persistence it checks as it
// does for its counters), with Redis's clock ([record.Store]).
func (a *Allocator) Records() record.Store {
	if a.core != nil {
		return a.core.Records()
	}
	return &redisRecords{rdb: a.rdb, prefix: a.prefix, replicas: a.replicas, only: a.only}
}

// Records returns the records of the durable allocator, where the
// catalog is kept; nil when it keeps none.
func (c *Counter) Records() record.Store { return record.Of(c.durable) }

// Records returns the records of the Leaser's Redis: those a Redis-only
// Allocator with the Leaser's prefix keeps, so that snowflake templates
// and counters on one Redis are proven together. The Redis must keep its
// writes, as for leases.
func (l *Leaser) Records() record.Store {
	return &redisRecords{rdb: l.rdb, prefix: l.base, replicas: l.replicas, only: &l.only}
}

// redisRecords are the records of a Redis without a ledger.
type redisRecords struct {
	rdb      redis.UniversalClient
	prefix   string
	replicas replicas
	only     *onlyRedis // refuses a Redis that may lose writes
	raw      bool       // the migration's own: does not wait for it
}

func (r *redisRecords) keys() []string {
	p := r.prefix + "{%records}"
	return []string{p + ":i", p + ":v", p + ":n", p + ":seq"}
}

var getRecordsScript = redis.NewScript(`
return {redis.call('HMGET', KEYS[2], unpack(ARGV)), redis.call('HMGET', KEYS[3], unpack(ARGV))}
`)

var scanRecordsScript = redis.NewScript(`
local ks
if ARGV[3] == '0' then
	ks = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[1], ARGV[2])
else
	ks = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[1], ARGV[2], 'LIMIT', 0, ARGV[3])
end
if #ks == 0 then
	return {{}, {}, {}}
end
return {ks, redis.call('HMGET', KEYS[2], unpack(ks)), redis.call('HMGET', KEYS[3], unpack(ks))}
`)

// commitRecordsScript checks ARGV[1] conditions (key, version; "0" for
// absent), then applies ops (kind p, d or r; key; value or end).
var commitRecordsScript = redis.NewScript(`
local nc = tonumber(ARGV[1])
local i = 2
for c = 1, nc do
	local cur = redis.call('HGET', KEYS[3], ARGV[i])
	if ARGV[i+1] == '0' then
		if cur then return 0 end
	elseif cur ~= ARGV[i+1] then
		return 0
	end
	i = i + 2
end
local function del(k)
	redis.call('HDEL', KEYS[2], k)
	redis.call('HDEL', KEYS[3], k)
	redis.call('ZREM', KEYS[1], k)
end
while i <= #ARGV do
	local kind, k, x = ARGV[i], ARGV[i+1], ARGV[i+2]
	if kind == 'p' then
		if redis.call('EXISTS', KEYS[4]) == 0 then
			local t = redis.call('TIME')
			redis.call('SET', KEYS[4], t[1] .. string.format('%06d', tonumber(t[2])))
		end
		local ver = redis.call('INCR', KEYS[4])
		redis.call('HSET', KEYS[2], k, x)
		redis.call('HSET', KEYS[3], k, ver)
		redis.call('ZADD', KEYS[1], 0, k)
	elseif kind == 'd' then
		del(k)
	else
		for _, kk in ipairs(redis.call('ZRANGEBYLEX', KEYS[1], '[' .. k, '(' .. x)) do
			del(kk)
		end
	end
	i = i + 3
end
return 1
`)

// check refuses a Redis that may lose writes, and moves the catalog an
// earlier release kept into the records (see migrate.go).
func (r *redisRecords) check(ctx context.Context, op string) error {
	if err := r.only.checkClient(ctx, r.rdb, op, r.keys()[1]); err != nil {
		return err
	}
	if r.raw {
		return nil
	}
	return r.migrate(ctx)
}

func (r *redisRecords) Get(ctx context.Context, keys ...string) ([]record.Record, error) {
	args := make([]any, len(keys))
	for i, k := range keys {
		if err := record.CheckKey(k); err != nil {
			return nil, err
		}
		args[i] = k
	}
	out := make([]record.Record, len(keys))
	for i, k := range keys {
		out[i] = record.Record{Key: k}
	}
	if len(keys) == 0 {
		return out, nil
	}
	if err := r.check(ctx, "read records"); err != nil {
		return nil, err
	}
	for try := 0; ; try++ {
		res, err := getRecordsScript.Run(ctx, r.rdb, r.keys(), args...).Slice()
		if err != nil {
			return nil, classify("read records", r.keys()[1], err)
		}
		out, err := r.decode(keys, res, 0)
		if err != nil || try > 0 {
			return out, err
		}
		moved := false
		for _, rec := range out {
			var err error
			switch {
			case rec.Exists(), r.raw:
				continue
			case strings.HasPrefix(rec.Key, "r/"):
				err = r.migrateRecord(ctx, rec.Key)
			case strings.HasPrefix(rec.Key, "i/"):
				err = r.migrateClaim(ctx, rec.Key)
			default:
				continue
			}
			if err != nil {
				return nil, err
			}
			moved = true
		}
		if !moved {
			return out, nil
		}
	}
}

// decode reads the values and versions of keys from res[at] and res[at+1].
func (r *redisRecords) decode(keys []string, res []any, at int) ([]record.Record, error) {
	if len(res) < at+2 {
		return nil, newError(ErrCorrupt, nil, "records %s: a script returned %v", r.keys()[1], res)
	}
	vs, _ := res[at].([]any)
	ns, _ := res[at+1].([]any)
	if len(vs) != len(keys) || len(ns) != len(keys) {
		return nil, newError(ErrCorrupt, nil, "records %s: a script returned %d values and %d versions for %d keys", r.keys()[1], len(vs), len(ns), len(keys))
	}
	out := make([]record.Record, len(keys))
	for i, k := range keys {
		out[i] = record.Record{Key: k}
		if ns[i] == nil {
			continue
		}
		v, _ := vs[i].(string)
		ver, err := strconv.ParseInt(fmt.Sprint(ns[i]), 10, 64)
		if err != nil || ver <= 0 || vs[i] == nil {
			return nil, newError(ErrCorrupt, nil, "records %s: record %.64q has the version %v", r.keys()[1], k, ns[i])
		}
		out[i].Value, out[i].Version = []byte(v), ver
	}
	return out, nil
}

func (r *redisRecords) Scan(ctx context.Context, from, to string, limit int) ([]record.Record, error) {
	if err := r.check(ctx, "scan records"); err != nil {
		return nil, err
	}
	end := "+"
	if to != "" {
		end = "(" + to
	}
	res, err := scanRecordsScript.Run(ctx, r.rdb, r.keys(), "["+from, end, max(limit, 0)).Slice()
	if err != nil {
		return nil, classify("scan records", r.keys()[1], err)
	}
	if len(res) != 3 {
		return nil, newError(ErrCorrupt, nil, "records %s: the scan returned %v", r.keys()[1], res)
	}
	ks, _ := res[0].([]any)
	keys := make([]string, len(ks))
	for i, k := range ks {
		keys[i], _ = k.(string)
	}
	return r.decode(keys, res, 1)
}

func (r *redisRecords) Commit(ctx context.Context, cond []record.Record, ops []record.Op) (bool, error) {
	if err := record.Check(cond, ops); err != nil {
		return false, err
	}
	if err := r.check(ctx, "write records"); err != nil {
		return false, err
	}
	args := []any{len(cond)}
	for _, c := range cond {
		args = append(args, c.Key, strconv.FormatInt(c.Version, 10))
	}
	for _, o := range ops {
		switch {
		case o.Value != nil:
			args = append(args, "p", o.Key, o.Value)
		case o.End != "":
			args = append(args, "r", o.Key, o.End)
		default:
			args = append(args, "d", o.Key, "")
		}
	}
	n, err := r.replicas.scriptKeys(ctx, r.rdb, commitRecordsScript, r.keys(), args...).Int()
	if err != nil {
		return false, classify("write records", r.keys()[1], err)
	}
	return n == 1, nil
}

// Now returns Redis's clock.
func (r *redisRecords) Now(ctx context.Context) (time.Time, error) {
	t, err := r.rdb.Time(ctx).Result()
	if err != nil {
		return time.Time{}, classify("read the clock", r.keys()[1], err)
	}
	return t, nil
}

package redisseq

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/snowflake"
)

// What earlier releases kept in keys of their own, moved into the
// records when a process first meets it: the catalog and named values,
// the claims of idempotency keys, and the leases of worker ids. The
// promises themselves are kept above the records (packages catalog,
// claim and snowflake).

// Layouts of earlier releases, moved into the records of a Redis without
// a ledger at the first use of its records by a process:
//
//	P{sn catalog}:entries  hash  entry ID -> the entry as JSON
//	P{sn catalog}:version  the catalog's version
//
//	P{NAME}:record         the value recorded under NAME
//
// A named value becomes the record "r/" and its name (see
// sequence.Remember) when a process reads that record and finds none,
// and its key is deleted. The entries are imported into the catalog's records (see package
// catalog), keeping when they were first enrolled and by whom, and the
// hash is deleted when it holds what was imported, so that a Forget is
// not undone by a second import. Every process of a store must run this
// release or a later one: a process of an earlier one would enroll in
// the hash.

// migrate imports the catalog of an earlier release, once per process: a
// call while another runs it waits, so that nothing is proven against
// records the import has not filled yet.
func (r *redisRecords) migrate(ctx context.Context) error {
	r.only.migrateMu.Lock()
	defer r.only.migrateMu.Unlock()
	if r.only.migrated.Load() {
		return nil
	}
	raw := *r
	raw.raw = true
	hkey := redisKey(r.prefix, "sn catalog", ":entries")
	m, err := r.rdb.HGetAll(ctx, hkey).Result()
	if err != nil {
		return classify("read the catalog of an earlier release", hkey, err)
	}
	if len(m) > 0 {
		var es []catalog.Entry
		for id, v := range m {
			var e catalog.Entry
			if err := json.Unmarshal([]byte(v), &e); err != nil || e.ID != id {
				return newError(ErrCorrupt, nil, "catalog entry %q of an earlier release holds %.80q", id, v)
			}
			es = append(es, e)
		}
		if err := catalog.New(record.Store(&raw), nil).Import(ctx, es); err != nil {
			return err
		}
		// Deleted only if nothing enrolled in it since it was read.
		args := make([]any, 0, 2*len(m))
		for id, v := range m {
			args = append(args, id, v)
		}
		if err := dropLegacyScript.Run(ctx, r.rdb, []string{hkey, redisKey(r.prefix, "sn catalog", ":version")}, args...).Err(); err != nil && !errors.Is(err, redis.Nil) {
			return classify("delete the catalog of an earlier release", hkey, err)
		}
	}
	r.only.migrated.Store(true)
	return nil
}

// migrateRecord moves the value an earlier release recorded under the
// name of record key k ("r/" and the name), if there is one.
func (r *redisRecords) migrateRecord(ctx context.Context, k string) error {
	name, ok := strings.CutPrefix(k, "r/")
	if !ok {
		return nil
	}
	// The key is in a slot of its own: read it, write the record under
	// the condition that it is absent, then delete the key.
	old := redisKey(r.prefix, name, ":record")
	v, err := r.rdb.Get(ctx, old).Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return classify("read a record of an earlier release", old, err)
	}
	raw := *r
	raw.raw = true
	if _, err := raw.Commit(ctx, []record.Record{{Key: k}}, []record.Op{record.Put(k, []byte(v))}); err != nil {
		return err
	}
	return classify("delete a record of an earlier release", old, r.rdb.Del(ctx, old).Err())
}

// dropLegacyScript deletes the hash KEYS[1] and the version KEYS[2] when
// the hash holds exactly the pairs of ARGV.
var dropLegacyScript = redis.NewScript(`
if redis.call('HLEN', KEYS[1]) * 2 ~= #ARGV then return 0 end
for i = 1, #ARGV, 2 do
	if redis.call('HGET', KEYS[1], ARGV[i]) ~= ARGV[i+1] then return 0 end
end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
`)

// The claims of idempotency keys of a Redis without a ledger are records
// (see claim.Records), timed by the server's clock. An earlier release
// kept each in a hash of its own,
//
//	P{claim:ID}  hash  digest, token, answer, until (Unix microseconds), done
//
// which moves into the records when a process claims ID and finds no
// record of it, and is deleted.

// claimKey is the Redis key an earlier release kept the claim of id at.
func claimKey(prefix, id string) string { return redisKey(prefix, "claim:"+id, "") }

// migrateClaim moves the claim of the record key k ("i/" and its id) that
// an earlier release kept, if there is one.
func (r *redisRecords) migrateClaim(ctx context.Context, k string) error {
	id, ok := strings.CutPrefix(k, "i/")
	if !ok {
		return nil
	}
	old := claimKey(r.prefix, id)
	f, err := r.rdb.HGetAll(ctx, old).Result()
	if err != nil {
		return classify("read a claim of an earlier release", old, err)
	}
	if len(f) == 0 {
		return nil
	}
	until, err := strconv.ParseInt(f["until"], 10, 64)
	if err != nil {
		return newError(ErrCorrupt, nil, "key %s holds the claim's time %q", old, f["until"])
	}
	m := claim.Memo{Digest: f["digest"], Token: f["token"], Answer: f["answer"], Until: until, Done: f["done"] == "1"}
	raw := *r
	raw.raw = true
	if _, err := raw.Commit(ctx, []record.Record{{Key: k}}, claim.Ops(id, m)); err != nil {
		return err
	}
	return classify("delete a claim of an earlier release", old, r.rdb.Del(ctx, old).Err())
}

// movedLayout is what the layout key of an earlier release holds once
// its ids are in the records.
const movedLayout = "moved to the records: upgrade every process of sn"

// moveScript fences the keys of an earlier release under ARGV[1] (see
// Leaser.Lease), keeping the layout they had, and returns that layout
// ("" for none) and, for each id that a process of that release may
// still hold, the id, the lease's expiry in ms (-2 for none) and the
// bound. When it fences (the first time, or again after Redis lost the
// fence), those are the ids below ARGV[2] that have a lease or a bound,
// and it keeps the ids with a lease in the set "pending"; once fenced,
// they are the pending ids whose lease has not lapsed: no process of
// that release takes an id behind the fence.
var moveScript = redis.NewScript(`
local p, n, moved = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local lay = redis.call('GET', p .. 'layout')
local out = {}
if lay ~= moved then
	if lay then redis.call('SET', p .. 'layout-was', lay) end
	redis.call('SET', p .. 'layout', moved)
	redis.call('SET', p .. 'epoch', moved)
	for id = 0, n - 1 do
		local t = redis.call('PTTL', p .. 'lease:' .. id)
		local b = redis.call('GET', p .. 'bound:' .. id)
		if t > 0 then redis.call('SADD', p .. 'pending', id) end
		if t > 0 or b then
			out[#out + 1] = tostring(id)
			out[#out + 1] = tostring(t)
			out[#out + 1] = b or ''
		end
	end
else
	for _, id in ipairs(redis.call('SMEMBERS', p .. 'pending')) do
		local t = redis.call('PTTL', p .. 'lease:' .. id)
		if t > 0 then
			out[#out + 1] = id
			out[#out + 1] = tostring(t)
			out[#out + 1] = redis.call('GET', p .. 'bound:' .. id) or ''
		else
			redis.call('SREM', p .. 'pending', id)
		end
	end
end
table.insert(out, 1, redis.call('GET', p .. 'layout-was') or '')
return out
`)

// move fences the ids of an earlier release, and adopts in the records
// those its processes may still hold, before each Lease: Redis may have
// lost the fence since the last (FLUSHALL, a replica that lagged).
func (l *Leaser) move(ctx context.Context, layout snowflake.Layout) error {
	if layout.WorkerBits < 0 || layout.WorkerBits > 30 {
		return nil // a layout Lease refuses
	}
	if err := l.only.checkClient(ctx, l.rdb, "Lease", l.prefix); err != nil {
		return err
	}
	// That release leased at most 2^20 ids of a name.
	res, err := l.replicas.scriptKeys(ctx, l.rdb, moveScript, []string{l.prefix}, l.prefix, min(layout.Workers(), 1<<20), movedLayout).StringSlice()
	if err != nil {
		return classify("Lease: move the leases of an earlier release", l.prefix, err)
	}
	if len(res) == 0 || len(res)%3 != 1 {
		return newError(ErrCorrupt, nil, "Lease: the script that moves the leases of an earlier release returned %d values", len(res))
	}
	if res[0] != "" || len(res) > 1 {
		recs := l.Records()
		now, err := recs.Now(ctx)
		if err != nil {
			return err
		}
		err = record.Update(ctx, recs, func(tx *record.Tx) error {
			// The layout, where snowflake.MoveLayouts finds one of
			// sn's records below.
			lk := "r/snowflake layout " + l.l.Name()
			r, err := tx.Get1(lk)
			if err != nil {
				return err
			}
			if !r.Exists() && res[0] != "" {
				tx.Put(lk, []byte(res[0]))
			}
			for i := 1; i < len(res); i += 3 {
				id, err1 := strconv.ParseInt(res[i], 10, 64)
				ms, err2 := strconv.ParseInt(res[i+1], 10, 64)
				if err1 != nil || err2 != nil {
					return newError(ErrCorrupt, nil, "Lease: the lease %s%s of an earlier release: %q, %q", l.prefix, res[i], res[i], res[i+1])
				}
				var deadline, bound time.Time
				if ms > 0 {
					deadline = now.Add(time.Duration(ms)*time.Millisecond + time.Second)
				}
				if b := res[i+2]; b != "" && b != "0" {
					ns, err := strconv.ParseInt(b, 10, 64)
					if err != nil {
						return newError(ErrCorrupt, err, "Lease: %sbound:%d holds %q, not nanoseconds", l.prefix, id, b)
					}
					bound = time.Unix(0, ns)
				}
				if err := l.l.Adopt(tx, id, deadline, bound); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := snowflake.MoveLayouts(ctx, recs); err != nil {
			return err
		}
	}
	return nil
}

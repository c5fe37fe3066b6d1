package redisseq

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/record"
)

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

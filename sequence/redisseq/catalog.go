package redisseq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence"
)

// enrollScript records ARGV[3] under ARGV[2] in the catalog hash KEYS[1]
// when the catalog's version KEYS[2] is still ARGV[1], and bumps the
// version. It returns the entry recorded under ARGV[2] (this one, or an
// earlier one), or false when another enrollment came first.
var enrollScript = redis.NewScript(`
local e = redis.call('HGET', KEYS[1], ARGV[2])
if e then return e end
local v = redis.call('GET', KEYS[2]) or '0'
if v ~= ARGV[1] then return false end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
redis.call('INCR', KEYS[2])
return ARGV[3]
`)

// redisCatalog is a catalog kept in Redis alone: a hash of entries and a
// version that every enrollment raises, so that one proven against an
// older version is proven again. Its keys are in one hash slot.
type redisCatalog struct {
	rdb      redis.UniversalClient
	prefix   string // the store's key prefix
	replicas replicas
	only     *onlyRedis // refuses a Redis that may lose writes
}

// keys returns the keys of the catalog: its entries and its version.
func (c *redisCatalog) keys() (entries, version string) {
	return redisKey(c.prefix, "sn catalog", ":entries"), redisKey(c.prefix, "sn catalog", ":version")
}

func (c *redisCatalog) enroll(ctx context.Context, e sequence.Entry, check func([]sequence.Entry) error) (sequence.Entry, error) {
	if err := sequence.CheckEntry(e); err != nil {
		return sequence.Entry{}, err
	}
	hkey, vkey := c.keys()
	if err := c.only.checkClient(ctx, c.rdb, "Enroll", hkey); err != nil {
		return sequence.Entry{}, err
	}
	for try := 0; ; try++ {
		version, es, got, found, err := c.read(ctx, e.ID)
		if err != nil || found {
			return got, err
		}
		if err := check(es); err != nil {
			return sequence.Entry{}, err
		}
		now, err := c.rdb.Time(ctx).Result()
		if err != nil {
			return sequence.Entry{}, classify("Enroll", hkey, err)
		}
		e.First = now.UTC()
		v, err := json.Marshal(e)
		if err != nil {
			return sequence.Entry{}, err
		}
		res, err := c.replicas.scriptKeys(ctx, c.rdb, enrollScript, []string{hkey, vkey}, version, e.ID, string(v)).Text()
		switch {
		case err == nil:
			return decodeEntry(e.ID, res)
		case !errors.Is(err, redis.Nil):
			return sequence.Entry{}, classify("Enroll", hkey, err)
		case try >= 100:
			return sequence.Entry{}, fmt.Errorf("redisseq: Enroll: the catalog changed under %d attempts: %w", try+1, sequence.ErrUnavailable)
		}
	}
}

// read reads the catalog's version and entries at one moment, and the
// entry with id among them.
func (c *redisCatalog) read(ctx context.Context, id string) (version string, es []sequence.Entry, got sequence.Entry, found bool, err error) {
	hkey, vkey := c.keys()
	var vcmd *redis.StringCmd
	var hcmd *redis.MapStringStringCmd
	_, err = c.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		vcmd = p.Get(ctx, vkey)
		hcmd = p.HGetAll(ctx, hkey)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return "", nil, got, false, classify("read the catalog", hkey, err)
	}
	version = "0"
	if v, err := vcmd.Result(); err == nil {
		version = v
	}
	for k, v := range hcmd.Val() {
		e, err := decodeEntry(k, v)
		if err != nil {
			return "", nil, got, false, err
		}
		if k == id {
			got, found = e, true
		}
		es = append(es, e)
	}
	sequence.SortEntries(es)
	return version, es, got, found, nil
}

func (c *redisCatalog) forget(ctx context.Context, id string) (bool, error) {
	hkey, vkey := c.keys()
	var del *redis.IntCmd
	_, err := c.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		del = p.HDel(ctx, hkey, id)
		p.Incr(ctx, vkey)
		return nil
	})
	if err != nil {
		return false, classify("Forget", hkey, err)
	}
	return del.Val() > 0, nil
}

func decodeEntry(id, v string) (sequence.Entry, error) {
	var e sequence.Entry
	if err := json.Unmarshal([]byte(v), &e); err != nil || e.ID != id {
		return e, newError(ErrCorrupt, nil, "catalog entry %q holds %.80q", id, v)
	}
	return e, nil
}

// cat returns the Allocator's catalog in Redis (without a ledger).
func (a *Allocator) cat() *redisCatalog {
	return &redisCatalog{rdb: a.rdb, prefix: a.prefix, replicas: a.replicas, only: a.only}
}

// Enroll records e in the store's catalog (a [sequence.Catalog]): with a
// ledger, in the ledger's, which must be a Catalog itself; without one,
// in Redis, as a hash of entries and a version that every enrollment
// raises, so that one proven against an older version is proven again.
func (a *Allocator) Enroll(ctx context.Context, e sequence.Entry, check func([]sequence.Entry) error) (sequence.Entry, error) {
	if a.core != nil {
		return a.core.Enroll(ctx, e, check)
	}
	return a.cat().enroll(ctx, e, check)
}

// Entries returns the store's catalog, oldest first (a
// [sequence.Catalog]): with a ledger, the ledger's.
func (a *Allocator) Entries(ctx context.Context) ([]sequence.Entry, error) {
	if a.core != nil {
		return a.core.Entries(ctx)
	}
	_, es, _, _, err := a.cat().read(ctx, "")
	return es, err
}

// Forget removes the entry with id from the store's catalog (a
// [sequence.Catalog]): with a ledger, from the ledger's.
func (a *Allocator) Forget(ctx context.Context, id string) (bool, error) {
	if a.core != nil {
		return a.core.Forget(ctx, id)
	}
	return a.cat().forget(ctx, id)
}

// cat returns the catalog of the Redis the Leaser keeps its leases in:
// the one a Redis-only Allocator with the default prefix keeps, so that
// snowflake templates and counters on one Redis are proven together.
func (l *Leaser) cat() *redisCatalog {
	return &redisCatalog{rdb: l.rdb, prefix: l.base, replicas: l.replicas, only: &l.only}
}

// Enroll records e in the catalog of the Leaser's Redis (a
// [sequence.Catalog]), which must keep its writes, as for leases.
func (l *Leaser) Enroll(ctx context.Context, e sequence.Entry, check func([]sequence.Entry) error) (sequence.Entry, error) {
	return l.cat().enroll(ctx, e, check)
}

// Entries returns the catalog of the Leaser's Redis.
func (l *Leaser) Entries(ctx context.Context) ([]sequence.Entry, error) {
	_, es, _, _, err := l.cat().read(ctx, "")
	return es, err
}

// Forget removes an entry of the catalog of the Leaser's Redis.
func (l *Leaser) Forget(ctx context.Context, id string) (bool, error) {
	return l.cat().forget(ctx, id)
}

// catalog returns the durable allocator's catalog.
func (c *Counter) catalog(op string) (sequence.Catalog, error) {
	cat, ok := c.durable.(sequence.Catalog)
	if !ok {
		return nil, fmt.Errorf("redisseq: %s: the durable allocator %T keeps no catalog: %w", op, c.durable, errors.ErrUnsupported)
	}
	return cat, nil
}

// Enroll records e in the durable allocator's catalog, which must be a
// [sequence.Catalog] (a [sequence.Catalog] itself).
func (c *Counter) Enroll(ctx context.Context, e sequence.Entry, check func([]sequence.Entry) error) (sequence.Entry, error) {
	cat, err := c.catalog("Enroll")
	if err != nil {
		return sequence.Entry{}, err
	}
	return cat.Enroll(ctx, e, check)
}

// Entries returns the durable allocator's catalog.
func (c *Counter) Entries(ctx context.Context) ([]sequence.Entry, error) {
	cat, err := c.catalog("Entries")
	if err != nil {
		return nil, err
	}
	return cat.Entries(ctx)
}

// Forget removes an entry of the durable allocator's catalog.
func (c *Counter) Forget(ctx context.Context, id string) (bool, error) {
	cat, err := c.catalog("Forget")
	if err != nil {
		return false, err
	}
	return cat.Forget(ctx, id)
}

var (
	_ sequence.Catalog = (*Allocator)(nil)
	_ sequence.Catalog = (*Counter)(nil)
	_ sequence.Catalog = (*Leaser)(nil)
)

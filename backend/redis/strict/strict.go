// Package strict registers the "redis-strict" backend of package
// github.com/sngen/sn/config: every number from one Redis counter, in the
// order of the calls across all processes (redisseq's Counter), refilled
// from a ledger. Import it for its side effect:
//
//	import _ "github.com/sngen/sn/backend/redis/strict"
//
// A redis-strict sequence reads the Redis fields of package backend/redis
// (url, required, prefix, replicas, replica_timeout), step (how many
// numbers each refill takes from the ledger), fetch_timeout, and ledger
// with the fields of the ledger's kind (a SQL ledger's table and
// replication). The ledger is a value: the driver registered for its
// URL's scheme opens it (config.OpenLedger; import backend/sql or
// backend/etcd), and if Redis loses its data, the counter is refilled
// above everything the ledger handed out, a gap and never a repeat.
//
// Without a ledger it is refused, unless single_host: true says that one
// host alone uses the Redis: then the bolt file at its path (package
// backend/bolt, shared with the Build's bolt sequences) backs the counter.
package strict

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sngen/sn/backend/bolt"
	"github.com/sngen/sn/backend/redis"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

func init() { config.Register("redis-strict", driver{}) }

// fields are a redis-strict sequence's fields.
type fields struct {
	redis.Fields

	// Ledger is the store of record the counter is refilled from, shared
	// by every machine that uses the Redis, as a URL its driver opens.
	Ledger string `yaml:"ledger"`

	// Path is the bbolt file behind the counter without a ledger, allowed
	// when SingleHost declares that one host alone uses the Redis. A
	// relative path is resolved against config.WithDir's directory.
	Path       string `yaml:"path"`
	SingleHost bool   `yaml:"single_host"`
}

// driver is the redis-strict backend.
type driver struct{}

// Check requires a URL, and a ledger or a path with single_host; the store
// is the URL, the key prefix and the ledger or file behind them.
func (driver) Check(t *config.Target) (config.StoreInfo, error) {
	var f fields
	err := t.Decode(&f)
	ledger, lerr := config.CheckLedger(t, f.Ledger)
	st := config.StoreInfo{Durable: true, Fields: slices.Concat(redis.FieldNames, []string{"ledger"}, ledger.Fields, []string{"path", "single_host", "step", "fetch_timeout"})}
	if err != nil {
		return st, err
	}
	var behind string
	errs := []error{lerr}
	switch {
	case f.Ledger != "":
		behind = ledger.ID
	case f.Path == "":
		errs = append(errs, &config.Error{Field: "ledger", Err: fmt.Errorf("the redis-strict backend needs a ledger that every machine using its Redis shares, "+
			"a database URL such as %s (set ledger here or in store; or, when one host alone uses the Redis, path and single_host: true)", config.LedgerForms())})
	case !f.SingleHost:
		errs = append(errs, &config.Error{Field: "path", Err: fmt.Errorf("path %q: a file is one machine's, and behind a Redis that several machines share "+
			"it repeats numbers once Redis loses its data: set ledger to a database every machine shares (%s), "+
			"or single_host: true if one host alone uses this Redis", f.Path, config.LedgerForms())})
	default:
		if abs, err := t.File(f.Path); err != nil {
			errs = append(errs, &config.Error{Field: "path", Err: err})
		} else {
			behind = abs
		}
	}
	errs = append(errs, f.Check("redis-strict"))
	if err := errors.Join(errs...); err != nil {
		return st, err
	}
	st.ID = f.ID("redis-strict") + " " + behind
	return st, nil
}

// Open shares the Build's Redis client, and its ledger or bolt file.
func (driver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	var f fields
	t.Decode(&f) // Check accepted it
	var durable sequence.Allocator
	if f.Ledger != "" {
		ledger, err := config.OpenLedger(ctx, t, f.Ledger)
		if err != nil {
			return nil, err
		}
		durable = ledger
	} else {
		store, err := bolt.Open(ctx, t, f.Path)
		if err != nil {
			return nil, err
		}
		durable = store
	}
	c, err := f.Client(ctx, t)
	if err != nil {
		return nil, err
	}
	return redisseq.NewCounter(c, durable, redisseq.CounterOptions{
		Prefix: f.Prefix, Step: t.Sequence.Step,
		Replicas: f.Replicas, ReplicaTimeout: f.ReplicaWait(),
	})
}

// Package redis registers the "redis" backend of package
// github.com/sngen/sn/config, and the Redis that the "snowflake" backend
// (package backend/snowflake) leases worker ids from; its package strict
// registers "redis-strict". Import them for their side effect:
//
//	import _ "github.com/sngen/sn/backend/redis"
//
// It is a module of its own, so that a program that does not use Redis
// does not require go-redis.
//
// A redis sequence serves blocks of numbers reserved from Redis (package
// sequence/redisseq) through a sequence.Segment. With a ledger, Redis
// serves ranges reserved from it (redisseq.NewAllocator): if Redis loses
// its data, the next range comes from the ledger, above everything issued
// on any machine, a gap and never a repeat. The ledger is a value: the
// driver registered for its URL's scheme opens it (config.OpenLedger;
// import backend/sql for postgres:// and mysql://, backend/etcd for
// etcd://). Without one, Redis keeps its counters alone
// (redisseq.NewRedisOnlyAllocator), and the first call refuses, with an
// error wrapping redisseq.ErrUnsafe, a Redis that does not run with
// appendonly yes and appendfsync always.
//
// A redis sequence reads url (required), prefix, replicas,
// replica_timeout ([Fields]), ledger with the fields of the ledger's kind
// (a SQL ledger's table and replication), and the steps of its Segment
// (step, min_step, max_step, prefetch, target, fetch_timeout, idle). prefix is put
// before every key written in Redis; replicas is how many Redis replicas
// must acknowledge each range before it is used (WAIT, in the same round
// trip), so that a failover to a lagging replica cannot issue numbers
// again, and replica_timeout how long to wait for them (default 1s).
//
// A Build connects to each URL once, however many templates use it, and a
// new client must answer PING within fetch_timeout.
//
// # Redis URLs
//
// The url of a redis or redis-strict sequence takes these forms:
//
//	redis://[user:password@]host:port[/db][?option=value...]   one server
//	rediss://...                                                one server over TLS
//	unix:///path/to/redis.sock[?db=N]                           one server on a Unix socket
//	redis+cluster://host1:port1,host2:port2[?option=value...]   a Redis Cluster
//	rediss+cluster://...                                        a Redis Cluster over TLS
//	redis+sentinel://host1:26379,host2:26379/master[/db][?option=value...]
//	                                                            the master Redis Sentinel names
//	rediss+sentinel://...                                       the same over TLS
//
// The options are those of go-redis's ParseURL, ParseClusterURL and
// ParseFailoverURL (dial_timeout=3s, pool_size=10, ...). A cluster URL lists
// its seed nodes separated by commas (or as addr= options); the client
// discovers the rest. A sentinel URL lists the sentinels, and its path is
// the name they monitor the master by; the user and password in it are
// the sentinels', the master's are the username= and password= options.
// After a failover the client follows the master the sentinels name.
// Replication is asynchronous: without a ledger, set replicas so that each
// range is on a replica before it is used, or a promoted replica that
// lagged issues it again; with a ledger, a replica that lagged costs a
// gap.
package redis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/sngen/sn/backend/snowflake"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
	sf "github.com/sngen/sn/sequence/snowflake"
)

func init() {
	config.Register("redis", driver{})
	for _, scheme := range []string{"redis", "rediss", "unix", "redis+cluster", "rediss+cluster", "redis+sentinel", "rediss+sentinel"} {
		snowflake.RegisterLeasers(scheme, leasers{})
	}
}

// Fields are the fields of a sequence served from Redis, which the
// drivers of this module read (redis, redis-strict, and snowflake's
// lease), and a driver of another backend in Redis may embed in its own:
// url, prefix, replicas and replica_timeout ([FieldNames]).
type Fields struct {
	// URL is the Redis; see "Redis URLs".
	URL string `yaml:"url"`

	// Prefix is put before every key written in Redis.
	Prefix string `yaml:"prefix"`

	// Replicas is how many Redis replicas must have each range before a
	// number from it is used (Redis's WAIT, in the same round trip), so
	// that a failover to a replica that lagged cannot issue the numbers
	// again. Numbers that too few replicas acknowledged in time are a
	// gap, and the call fails.
	Replicas int `yaml:"replicas"`

	// ReplicaTimeout bounds the wait for Replicas, as a Go duration.
	// Default: 1s.
	ReplicaTimeout string `yaml:"replica_timeout"`
}

// FieldNames are the names in a file of the fields of [Fields], for a
// driver's config.StoreInfo.Fields.
var FieldNames = []string{"url", "prefix", "replicas", "replica_timeout"}

// fields are a redis sequence's fields.
type fields struct {
	Fields

	// Ledger is the store of record the ranges are reserved from, shared
	// by every machine that issues numbers, as a URL its driver opens.
	Ledger string `yaml:"ledger"`
}

// driver is the redis backend.
type driver struct{}

// Check requires a URL of a form NewClient takes, and checks the ledger,
// when there is one; the store is the URL, the key prefix and the ledger.
func (driver) Check(t *config.Target) (config.StoreInfo, error) {
	var f fields
	err := t.Decode(&f)
	ledger, lerr := config.CheckLedger(t, f.Ledger)
	st := config.StoreInfo{Durable: true, Fields: slices.Concat(FieldNames, []string{"ledger"}, ledger.Fields, config.SegmentFields())}
	if err != nil {
		return st, err
	}
	if err := errors.Join(f.Check("redis"), lerr); err != nil {
		return st, err
	}
	st.ID = f.ID("redis")
	if f.Ledger != "" {
		st.ID += " " + ledger.ID
	}
	return st, nil
}

// Open connects to the URL and opens the ledger, or shares those the
// Build has.
func (driver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	var f fields
	t.Decode(&f) // Check accepted it
	var ledger config.Ledger
	if f.Ledger != "" {
		var err error
		if ledger, err = config.OpenLedger(ctx, t, f.Ledger); err != nil {
			return nil, err
		}
	}
	c, err := f.Client(ctx, t)
	if err != nil {
		return nil, err
	}
	opts := redisseq.AllocatorOptions{Prefix: f.Prefix, Replicas: f.Replicas, ReplicaTimeout: f.ReplicaWait()}
	var a *redisseq.Allocator
	if ledger == nil {
		a, err = redisseq.NewRedisOnlyAllocator(c, opts)
	} else {
		a, err = redisseq.NewAllocator(c, ledger, opts)
	}
	if err != nil {
		return nil, err
	}
	return config.Serve(t, a)
}

// leasers lease snowflake worker ids in a Redis (redisseq.NewLeaser).
type leasers struct{}

// Check checks the URL; the store is the URL and the prefix.
func (leasers) Check(t *config.Target, url, prefix string) (string, error) {
	f := Fields{URL: url, Prefix: prefix}
	if err := f.Check("snowflake"); err != nil {
		return "", err
	}
	return f.ID(""), nil
}

// Open connects to the URL, or shares the client the Build has.
func (leasers) Open(ctx context.Context, t *config.Target, url, prefix string) (sf.Leaser, error) {
	c, err := connect(ctx, t, url)
	if err != nil {
		return nil, err
	}
	return redisseq.NewLeaser(c, redisseq.LeaserOptions{Prefix: prefix})
}

// ReplicaWait returns f's replica timeout, zero for redisseq's default.
func (f Fields) ReplicaWait() time.Duration {
	d, _ := time.ParseDuration(f.ReplicaTimeout)
	return d
}

// Check checks f for a sequence of backend: a url of a form NewClient
// takes (required), replicas and replica_timeout. Each error is a
// *config.Error naming its field.
func (f Fields) Check(backend string) error {
	var errs []error
	switch _, err := parseURL(f.URL); {
	case f.URL == "":
		errs = append(errs, config.Missing("url", backend, "a Redis URL"))
	case err != nil:
		errs = append(errs, &config.Error{Field: "url", Err: fmt.Errorf("redis URL %q: %w", config.Redact(f.URL), err)})
	}
	if f.Replicas < 0 {
		errs = append(errs, &config.Error{Field: "replicas", Err: fmt.Errorf("%d: want 0 or more", f.Replicas)})
	}
	if f.ReplicaTimeout != "" {
		if d, err := time.ParseDuration(f.ReplicaTimeout); err != nil || d <= 0 {
			errs = append(errs, &config.Error{Field: "replica_timeout", Err: fmt.Errorf("%q: want a positive duration such as \"1s\"", f.ReplicaTimeout)})
		}
	}
	return errors.Join(errs...)
}

// ID is the store ID of a sequence of backend in f's Redis: the URL,
// without its password, and the key prefix, as
// `redis redis://cache:6379/0 prefix "sn:"`.
func (f Fields) ID(backend string) string {
	prefix := f.Prefix
	if prefix == "" {
		prefix = redisseq.DefaultPrefix
	}
	return strings.TrimPrefix(fmt.Sprintf("%s %s prefix %q", backend, config.Redact(f.URL), prefix), " ")
}

// Client returns the client of f's URL that the Build of t shares,
// connecting once per Build: a new client must answer PING within t's
// fetch timeout, before ctx is done, for a server that does not answer
// would otherwise hold Build for the client's dial timeout times its
// retries (minutes). The Build closes it.
func (f Fields) Client(ctx context.Context, t *config.Target) (goredis.UniversalClient, error) {
	return connect(ctx, t, f.URL)
}

// connect connects to rawURL once per Build. A new client must answer
// PING within the fetch timeout, before ctx is done: a server that does
// not answer would otherwise hold Build for the client's dial timeout
// times its retries (minutes).
func connect(ctx context.Context, t *config.Target, rawURL string) (goredis.UniversalClient, error) {
	timeout := t.FetchTimeout()
	return config.Share(t, "redis "+rawURL, func() (goredis.UniversalClient, error) {
		c, err := NewClient(rawURL)
		if err != nil {
			return nil, err
		}
		pctx, cancel := context.WithTimeout(ctx, timeout)
		err = c.Ping(pctx).Err()
		timedOut := pctx.Err() != nil && ctx.Err() == nil
		cancel()
		if err != nil {
			c.Close()
			if timedOut {
				err = fmt.Errorf("no answer within %v: %w", timeout, err)
			}
			return nil, fmt.Errorf("backend/redis: %s: %w", config.Redact(rawURL), err)
		}
		return c, nil
	})
}

package backend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/backend/bolt"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

// redisDriver is the redis backend: blocks of numbers reserved from Redis
// (redisseq's Allocator), served through a sequence.Segment. With a
// ledger, Redis serves ranges reserved from it (redisseq.NewAllocator);
// without one, Redis keeps the counters alone
// (redisseq.NewRedisOnlyAllocator), and the first call refuses a Redis
// that does not run with appendonly yes and appendfsync always.
type redisDriver struct{}

// Check requires a URL of a form NewRedisClient takes, and checks the
// ledger, when there is one; the store is the URL, the key prefix and the
// ledger.
func (redisDriver) Check(t *config.Target) (config.StoreInfo, error) {
	st := config.StoreInfo{Durable: true, Fields: slices.Concat(redisFields, ledgerFields, segmentFields)}
	s, err := decode(t)
	if err != nil {
		return st, err
	}
	errs := []error{checkURL(s.URL, "redis"), checkReplicas(s), checkLedger(s, "redis", false)}
	if err := errors.Join(errs...); err != nil {
		return st, err
	}
	st.ID = redisID("redis", s)
	if s.Ledger != "" {
		st.ID += " " + ledgerID(s)
	}
	return st, nil
}

// Open connects to the URL and opens the ledger, or shares those the
// Build has.
func (redisDriver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	s, _ := decode(t) // Check accepted it
	var ledger ledgerStore
	if s.Ledger != "" {
		var err error
		if ledger, err = openLedger(ctx, t); err != nil {
			return nil, err
		}
	}
	c, err := connect(ctx, t)
	if err != nil {
		return nil, err
	}
	opts := redisseq.AllocatorOptions{Prefix: s.Prefix, Replicas: s.Replicas, ReplicaTimeout: replicaTimeout(s)}
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

// strictDriver is the redis-strict backend: every number from a Redis
// counter, in the order of the calls across all processes (redisseq's
// Counter), refilled from the ledger or, on a single host, from the bolt
// file at the sequence's path.
type strictDriver struct{}

// Check requires a URL, and a ledger or a path with single_host; the store
// is the URL, the key prefix and the ledger or file behind them.
func (strictDriver) Check(t *config.Target) (config.StoreInfo, error) {
	st := config.StoreInfo{Durable: true, Fields: slices.Concat(redisFields, ledgerFields, []string{"path", "single_host", "step", "fetch_timeout"})}
	s, err := decode(t)
	if err != nil {
		return st, err
	}
	var behind string
	var errs []error
	switch {
	case s.Ledger != "":
		if err := checkLedger(s, "redis-strict", true); err != nil {
			errs = append(errs, err)
		} else {
			behind = ledgerID(s)
		}
	case s.Path == "":
		errs = append(errs, &config.Error{Field: "ledger", Err: fmt.Errorf("the redis-strict backend needs a ledger that every machine using its Redis shares, "+
			"a database URL such as %s (set ledger here or in store; or, when one host alone uses the Redis, path and single_host: true)", ledgerForms)})
	case !s.SingleHost:
		errs = append(errs, &config.Error{Field: "path", Err: fmt.Errorf("path %q: a file is one machine's, and behind a Redis that several machines share "+
			"it repeats numbers once Redis loses its data: set ledger to a database every machine shares (%s), "+
			"or single_host: true if one host alone uses this Redis", s.Path, ledgerForms)})
	default:
		if err := checkLedger(s, "redis-strict", false); err != nil {
			errs = append(errs, err)
		} else if abs, err := t.File(s.Path); err != nil {
			errs = append(errs, &config.Error{Field: "path", Err: err})
		} else {
			behind = abs
		}
	}
	if err := checkURL(s.URL, "redis-strict"); err != nil {
		errs = append(errs, err)
	}
	if err := checkReplicas(s); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return st, errors.Join(errs...)
	}
	st.ID = redisID("redis-strict", s) + " " + behind
	return st, nil
}

// Open shares the Build's Redis client, and its ledger or bolt file.
func (strictDriver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	s, _ := decode(t) // Check accepted it
	var durable sequence.Allocator
	if s.Ledger != "" {
		store, err := openLedger(ctx, t)
		if err != nil {
			return nil, err
		}
		durable = store
	} else {
		store, err := bolt.Open(ctx, t, s.Path)
		if err != nil {
			return nil, err
		}
		durable = store
	}
	c, err := connect(ctx, t)
	if err != nil {
		return nil, err
	}
	return redisseq.NewCounter(c, durable, redisseq.CounterOptions{
		Prefix: s.Prefix, Step: s.Step,
		Replicas: s.Replicas, ReplicaTimeout: replicaTimeout(s),
	})
}

// redisFields are the fields of a config.Sequence that both Redis
// backends read.
var redisFields = []string{"url", "prefix", "replicas", "replica_timeout"}

// replicaTimeout returns the replica timeout of s, zero for redisseq's
// default.
func replicaTimeout(s seq) time.Duration {
	d, _ := time.ParseDuration(s.ReplicaTimeout)
	return d
}

// checkReplicas checks the replica fields of a Redis backend.
func checkReplicas(s seq) error {
	var errs []error
	if s.Replicas < 0 {
		errs = append(errs, &config.Error{Field: "replicas", Err: fmt.Errorf("%d: want 0 or more", s.Replicas)})
	}
	if s.ReplicaTimeout != "" {
		if d, err := time.ParseDuration(s.ReplicaTimeout); err != nil || d <= 0 {
			errs = append(errs, &config.Error{Field: "replica_timeout", Err: fmt.Errorf("%q: want a positive duration such as \"1s\"", s.ReplicaTimeout)})
		}
	}
	return errors.Join(errs...)
}

// checkURL checks the url of a backend that needs one.
func checkURL(rawURL, backend string) error {
	if rawURL == "" {
		return missing("url", backend, "a Redis URL")
	}
	if _, err := parseURL(rawURL); err != nil {
		return &config.Error{Field: "url", Err: fmt.Errorf("redis URL %q: %w", redact(rawURL), err)}
	}
	return nil
}

// redisID is the store ID of a sequence of backend in Redis: the URL,
// without its password, and the key prefix.
func redisID(backend string, s seq) string {
	prefix := s.Prefix
	if prefix == "" {
		prefix = redisseq.DefaultPrefix
	}
	return fmt.Sprintf("%s %s prefix %q", backend, redact(s.URL), prefix)
}

// connect connects to t's URL once per Build. A new client must answer
// PING within the fetch timeout, before ctx is done: a server that does
// not answer would otherwise hold Build for the client's dial timeout
// times its retries (minutes).
func connect(ctx context.Context, t *config.Target) (redis.UniversalClient, error) {
	s, _ := decode(t) // Check accepted it
	rawURL := s.URL
	timeout := fetchTimeout(s)
	return config.Share(t, "redis "+rawURL, func() (redis.UniversalClient, error) {
		c, err := NewRedisClient(rawURL)
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
			return nil, fmt.Errorf("backend: redis %s: %w", redact(rawURL), err)
		}
		return c, nil
	})
}

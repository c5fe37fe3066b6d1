package backend

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

// redisDriver is the redis backend: blocks of numbers reserved from Redis
// (redisseq's Allocator), served through a sequence.Segment.
type redisDriver struct{}

// Check requires a URL of a form NewRedisClient takes; the store is the
// URL and the key prefix.
func (redisDriver) Check(t *config.Target) (config.Store, error) {
	st := config.Store{Durable: true, Fields: append([]string{"url", "prefix"}, segmentFields...)}
	if err := checkURL(t.Sequence.URL, "redis"); err != nil {
		return st, err
	}
	st.ID = redisID("redis", t.Sequence)
	return st, nil
}

// Open connects to the URL, or shares the client the Build has.
func (redisDriver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	c, err := connect(ctx, t)
	if err != nil {
		return nil, err
	}
	return serve(t, redisseq.NewRedisOnlyAllocator(c, &redisseq.AllocatorOptions{Prefix: t.Sequence.Prefix}))
}

// strictDriver is the redis-strict backend: every number from a Redis
// counter, in the order of the calls across all processes (redisseq's
// Counter), refilled from the bolt file at the sequence's path.
type strictDriver struct{}

// Check requires a path and a URL; the store is the URL, the key prefix
// and the file behind them.
func (strictDriver) Check(t *config.Target) (config.Store, error) {
	st := config.Store{Durable: true, Fields: []string{"url", "prefix", "path", "step", "fetch_timeout"}}
	var abs string
	var errs []error
	if t.Sequence.Path == "" {
		errs = append(errs, missing("path", "redis-strict", "a file"))
	} else if a, err := t.Abs(t.Sequence.Path); err != nil {
		errs = append(errs, &config.Error{Field: "path", Err: err})
	} else {
		abs = a
	}
	if err := checkURL(t.Sequence.URL, "redis-strict"); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return st, errors.Join(errs...)
	}
	st.ID = redisID("redis-strict", t.Sequence) + " " + abs
	return st, nil
}

// Open shares the Build's bolt file and Redis client.
func (strictDriver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	store, err := openBolt(ctx, t)
	if err != nil {
		return nil, err
	}
	c, err := connect(ctx, t)
	if err != nil {
		return nil, err
	}
	return redisseq.NewCounter(c, store, &redisseq.CounterOptions{Prefix: t.Sequence.Prefix, Step: t.Sequence.Step}), nil
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
func redisID(backend string, s config.Sequence) string {
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
	rawURL := t.Sequence.URL
	timeout := fetchTimeout(t.Sequence)
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

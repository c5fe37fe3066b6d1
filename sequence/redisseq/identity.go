package redisseq

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// A Redis is identified by what it is, not how its URL is spelt: a random
// value kept under the prefix (prefix + "{id}"), written by the first
// process to ask. Two URLs that reach one server (a host name and its
// address, a Sentinel and the master it names) and one prefix read the
// same value; another server, database or prefix has another.

// redisIdentity returns the identity of the Redis behind rdb under prefix.
func redisIdentity(ctx context.Context, rdb redis.UniversalClient, prefix string) (string, error) {
	k := prefix + "{id}"
	var b [16]byte
	_, _ = rand.Read(b[:])
	fresh := hex.EncodeToString(b[:])
	if err := rdb.SetNX(ctx, k, fresh, 0).Err(); err != nil {
		return "", classify("read the identity of", k, err)
	}
	id, err := rdb.Get(ctx, k).Result()
	if err != nil {
		return "", classify("read the identity of", k, err)
	}
	return fmt.Sprintf("redis prefix %q %s", prefix, id), nil
}

// StoreID returns the identity of the Allocator's store: the Redis and
// prefix it serves from, and, with a ledger, the ledger's.
func (a *Allocator) StoreID(ctx context.Context) (string, error) {
	if a.core != nil {
		return a.core.StoreID(ctx)
	}
	return redisIdentity(ctx, a.rdb, a.prefix)
}

// StoreID returns the identity of the Counter's store: the Redis and
// prefix it serves from, and the ledger's (its StoreID).
func (c *Counter) StoreID(ctx context.Context) (string, error) {
	r, err := redisIdentity(ctx, c.rdb, c.prefix)
	if err != nil {
		return "", err
	}
	id := c.ident
	if id == nil {
		return "", fmt.Errorf("redisseq: the ledger %T has no identity: %w", c.durable, errors.ErrUnsupported)
	}
	l, err := id.StoreID(ctx)
	if err != nil {
		return "", err
	}
	return r + " over " + l, nil
}

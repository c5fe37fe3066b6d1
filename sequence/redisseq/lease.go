package redisseq

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/snowflake"
)

// Leaser leases snowflake worker ids from Redis: a [snowflake.Leaser].
//
// It is the [snowflake.RecordLeaser] over the records of the Redis
// ([Leaser.Records]): each id of a name is a record holding a random
// token, the holder's; a deadline by the server's clock, never a
// client's; and the bound, the last instant its holders may have issued
// at. Taking, renewing and releasing an id are each one script that the
// id's record did not change under. A new holder issues only after the
// bound, so the ids of two holders of one id never meet. An id found
// without a bound (never used, or Redis lost it) is issued with only
// after one TTL (see snowflake.New), so a Lease prefers an id a holder
// released, whose bound is known. Redis losing its data (restarted
// empty, flushed) loses the records, and their versions are never given
// again: a holder's next renewal fails (sequence.ErrLeaseLost) and it
// stops issuing.
//
// The bound is what keeps ids unique across restarts, so Redis must not
// lose it: as for [NewRedisOnlyAllocator], every read and write of the
// records refuses, with an error wrapping [ErrUnsafe], a server that does
// not fsync every write (appendonly yes, appendfsync always) or that may
// evict keys (maxmemory-policy other than noeviction). Replication is
// asynchronous: set [LeaserOptions.Replicas] when a failover may promote a
// replica.
//
// An earlier release kept each name's ids in keys of their own (see
// [Leaser.Lease]); each Lease fences them, and adopts those in use.
type Leaser struct {
	rdb      redis.UniversalClient
	prefix   string // the earlier release's keys of the name, ending in the hash tag
	base     string // the prefix of LeaserOptions: the store's, for its records
	replicas replicas
	only     onlyRedis
	l        *snowflake.RecordLeaser
}

// LeaserOptions configure a [Leaser].
type LeaserOptions struct {
	// Prefix is the prefix of the Leaser's keys; "" means DefaultPrefix.
	// Every Gen that may share worker ids must use the same prefix.
	Prefix string
	// Name tells apart series of ids that may reuse one another's worker
	// ids (two layouts, two services): at most 255 bytes; "" means
	// "snowflake". A name is recorded with its layout, and a Lease with
	// another layout is refused.
	Name string

	// Replicas is how many replicas must have each lease, renewal and
	// release before it counts (Redis's WAIT, sent in the same round
	// trip), as [AllocatorOptions.Replicas]: without it, a failover to a
	// replica that lagged can lose a bound.
	// default: 0, do not wait.
	Replicas int

	// ReplicaTimeout bounds the wait for Replicas; a write too few
	// replicas acknowledged in time is an error.
	// default: [DefaultReplicaTimeout], 1s.
	ReplicaTimeout time.Duration
}

// NewLeaser returns a Leaser over c. A nil c, or a Name longer than 255
// bytes, is an error wrapping [sequence.ErrInvalidArgument].
func NewLeaser(c redis.UniversalClient, o LeaserOptions) (*Leaser, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: redisseq.NewLeaser with a nil client", sequence.ErrInvalidArgument)
	}
	if o.Name == "" {
		o.Name = "snowflake"
	}
	l := &Leaser{
		rdb:      c,
		prefix:   redisKey(prefixOrDefault(o.Prefix), "worker:"+o.Name, ":"),
		base:     prefixOrDefault(o.Prefix),
		replicas: newReplicas(o.Replicas, o.ReplicaTimeout),
	}
	var err error
	if l.l, err = snowflake.NewRecordLeaser(l.Records(), o.Name); err != nil {
		return nil, err
	}
	return l, nil
}

// Lease takes a free worker id below layout.Workers() for ttl (see
// [snowflake.RecordLeaser.Lease]). It returns an error wrapping
// snowflake.ErrLayout when the name was recorded with another layout,
// [ErrUnsafe] for a server that may lose the bounds, and
// sequence.ErrUnavailable when every id is held.
//
// Each Lease first fences the ids an earlier release kept in keys of
// their own (P{worker:NAME}:lease:ID, with an expiry, and :bound:ID), in
// one script: it sets the name's layout key to a value no layout has, so
// that a Lease of that release refuses, and its epoch marker too, so that
// a renewal of that release fails and its holder stops issuing; and it
// returns the ids a process of that release may still hold, which the
// Lease adopts in the records, each held for what was left of its expiry
// and a second, with its bound, before it takes one. Redis losing the
// fence (FLUSHALL) lets a process of that release lease again until the
// next Lease here, which fences again and adopts what it took.
func (l *Leaser) Lease(ctx context.Context, layout snowflake.Layout, ttl time.Duration) (snowflake.Lease, error) {
	if err := l.move(ctx, layout); err != nil {
		return nil, err
	}
	return l.l.Lease(ctx, layout, ttl)
}

var _ snowflake.Leaser = (*Leaser)(nil)

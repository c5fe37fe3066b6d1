package redisseq

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sngen/sn/sequence"
)

// Redis is a cache in front of the ledger: the journal and the claims of
// idempotency keys live in the ledger, which records each range Redis
// takes as reserved by the cache. A number voided, or released unused by
// a process at its close, is noted there; numbers in a range that Redis
// lost (a flush, a failover) stay open in an audit, bounded by the range,
// with the cause named.

// durableAs returns the ledger as a T, or an error wrapping
// errors.ErrUnsupported.
func durableAs[T any](c *Counter, what string) (T, error) {
	var zero T
	if c == nil {
		return zero, fmt.Errorf("redisseq: %s: Redis alone keeps no %s: %w", what, what, errors.ErrUnsupported)
	}
	t, ok := c.durable.(T)
	if !ok {
		return zero, fmt.Errorf("redisseq: %s: the ledger %T keeps no %s: %w", what, c.durable, what, errors.ErrUnsupported)
	}
	return t, nil
}

// Note appends a record to key's journal in the ledger (see
// [sequence.Journal]).
func (c *Counter) Note(ctx context.Context, key string, e sequence.Event) (sequence.Event, error) {
	j, err := durableAs[sequence.Journal](c, "journal")
	if err != nil {
		return sequence.Event{}, err
	}
	return j.Note(ctx, key, e)
}

// Events reads key's journal in the ledger.
func (c *Counter) Events(ctx context.Context, key string, after int64, limit int) ([]sequence.Event, error) {
	j, err := durableAs[sequence.Journal](c, "journal")
	if err != nil {
		return nil, err
	}
	return j.Events(ctx, key, after, limit)
}

// Head returns where key's journal in the ledger ends.
func (c *Counter) Head(ctx context.Context, key string) (sequence.Head, error) {
	j, err := durableAs[sequence.Journal](c, "journal")
	if err != nil {
		return sequence.Head{}, err
	}
	return j.Head(ctx, key)
}

// Prune prunes key's journal in the ledger (see [sequence.Pruner]).
func (c *Counter) Prune(ctx context.Context, key string, p sequence.Event) (sequence.Event, error) {
	pr, err := durableAs[sequence.Pruner](c, "journal")
	if err != nil {
		return sequence.Event{}, err
	}
	return pr.Prune(ctx, key, p)
}

// Claim claims an idempotency key in the ledger (see
// [sequence.Replayer]).
func (c *Counter) Claim(ctx context.Context, id, digest, token string, lease time.Duration) (sequence.Claim, error) {
	r, err := durableAs[sequence.Replayer](c, "idempotency keys")
	if err != nil {
		return sequence.Claim{}, err
	}
	return r.Claim(ctx, id, digest, token, lease)
}

// Settle records the answer of a claim in the ledger.
func (c *Counter) Settle(ctx context.Context, id, token, answer string, keep time.Duration) error {
	r, err := durableAs[sequence.Replayer](c, "idempotency keys")
	if err != nil {
		return err
	}
	return r.Settle(ctx, id, token, answer, keep)
}

// Note appends a record to key's journal in the ledger (see
// [sequence.Journal]).
func (a *Allocator) Note(ctx context.Context, key string, e sequence.Event) (sequence.Event, error) {
	return a.core.Note(ctx, key, e)
}

// Events reads key's journal in the ledger.
func (a *Allocator) Events(ctx context.Context, key string, after int64, limit int) ([]sequence.Event, error) {
	return a.core.Events(ctx, key, after, limit)
}

// Head returns where key's journal in the ledger ends.
func (a *Allocator) Head(ctx context.Context, key string) (sequence.Head, error) {
	return a.core.Head(ctx, key)
}

// Prune prunes key's journal in the ledger (see [sequence.Pruner]).
func (a *Allocator) Prune(ctx context.Context, key string, p sequence.Event) (sequence.Event, error) {
	return a.core.Prune(ctx, key, p)
}

// Claim claims an idempotency key in the ledger (see
// [sequence.Replayer]).
func (a *Allocator) Claim(ctx context.Context, id, digest, token string, lease time.Duration) (sequence.Claim, error) {
	return a.core.Claim(ctx, id, digest, token, lease)
}

// Settle records the answer of a claim in the ledger.
func (a *Allocator) Settle(ctx context.Context, id, token, answer string, keep time.Duration) error {
	return a.core.Settle(ctx, id, token, answer, keep)
}

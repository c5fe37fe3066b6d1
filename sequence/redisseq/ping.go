package redisseq

import (
	"context"

	"github.com/sngen/sn/sequence"
)

// Ping asks Redis, and the ledger behind it, whether they answer.
func (a *Allocator) Ping(ctx context.Context) error {
	if err := a.rdb.Ping(ctx).Err(); err != nil {
		return classify("Ping", a.prefix, err)
	}
	if a.core != nil {
		return sequence.Ping(ctx, a.core.durable)
	}
	return nil
}

// Ping asks Redis, and the durable allocator behind it, whether they
// answer.
func (c *Counter) Ping(ctx context.Context) error {
	if err := c.rdb.Ping(ctx).Err(); err != nil {
		return classify("Ping", c.prefix, err)
	}
	return sequence.Ping(ctx, c.durable)
}

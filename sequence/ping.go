package sequence

import (
	"context"
	"errors"
	"fmt"
)

// Pinger is implemented by a [Gen] or [Allocator] whose store can be asked
// whether it answers: a readiness check. Ping returns nil when the store
// answered, and otherwise an error wrapping [ErrUnavailable] (or
// [ErrClosed]). It draws nothing and changes nothing.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Ping pings v if it is a [Pinger], and returns nil otherwise: a store
// that cannot be asked (one in memory) is taken to answer.
func Ping(ctx context.Context, v any) error {
	if p, ok := v.(Pinger); ok {
		return p.Ping(ctx)
	}
	return ctx.Err()
}

// Ping pings the Segment's allocator. A closed Segment returns an error
// wrapping ErrClosed.
func (s *Segment) Ping(ctx context.Context) error {
	if s.closed.Load() {
		return fmt.Errorf("%w: Segment", ErrClosed)
	}
	return Ping(ctx, s.alloc)
}

// Ping pings the Gen, which the queue needs for its refills.
func (qd *Queued) Ping(ctx context.Context) error {
	if qd.closed.Load() {
		return fmt.Errorf("%w: Queued", ErrClosed)
	}
	return Ping(ctx, qd.gen)
}

// Ping pings every Gen, and returns nil when at least one answers, for
// then numbers are issued: the errors of those that did not are logged
// as they fail calls. With none answering, the error wraps ErrUnavailable
// and each Gen's error.
func (b *Balanced) Ping(ctx context.Context) error {
	if b.closed.Load() {
		return fmt.Errorf("%w: Balanced", ErrClosed)
	}
	var errs []error
	for i, g := range b.gens {
		err := Ping(ctx, g)
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("Gen %d: %w", i, err))
	}
	return fmt.Errorf("%w: no Gen of a Balanced answers: %w", ErrUnavailable, errors.Join(errs...))
}

package sequence

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sngen/sn/sequence/record"
)

// Expire lets the Allocator delete key once ttl has passed (see
// [Expirer]). The Segment's own state for the key stays until it is
// released or idle; a block it holds for a key the store deleted and
// started again is refused when it is refilled ([ErrRegressed]), never
// issued twice. It returns an error wrapping errors.ErrUnsupported if the
// Allocator is not an Expirer.
func (s *Segment) Expire(ctx context.Context, key string, ttl time.Duration) error {
	if s.closed.Load() {
		return ErrClosed
	}
	s.expiring.Store(key, true) // its counter may start again: Close returns nothing of it
	e, ok := s.alloc.(Expirer)
	if !ok {
		return fmt.Errorf("sequence: Expire(%q): %T is not an Expirer: %w", key, s.alloc, errors.ErrUnsupported)
	}
	return e.Expire(ctx, key, ttl)
}

// Records returns the records of the Allocator's store (see package
// record), or nil if it keeps none.
func (s *Segment) Records() record.Store { return record.Of(s.alloc) }

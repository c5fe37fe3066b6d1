package sequence

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Mark raises key's mark in the Allocator and returns it (see [Marker]).
// It returns an error wrapping errors.ErrUnsupported if the Allocator is
// not a Marker.
func (s *Segment) Mark(ctx context.Context, key string, v int64) (int64, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	m, ok := s.alloc.(Marker)
	if !ok {
		return 0, fmt.Errorf("sequence: Mark(%q): %T is not a Marker: %w", key, s.alloc, errors.ErrUnsupported)
	}
	return m.Mark(ctx, key, v)
}

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
	e, ok := s.alloc.(Expirer)
	if !ok {
		return fmt.Errorf("sequence: Expire(%q): %T is not an Expirer: %w", key, s.alloc, errors.ErrUnsupported)
	}
	return e.Expire(ctx, key, ttl)
}

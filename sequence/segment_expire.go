package sequence

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sngen/sn/sequence/record"
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

// Now returns the time by the Allocator's store clock (see [Clock]). It
// returns an error wrapping errors.ErrUnsupported if the Allocator is not
// a Clock.
func (s *Segment) Now(ctx context.Context) (time.Time, error) {
	if s.closed.Load() {
		return time.Time{}, ErrClosed
	}
	c, ok := s.alloc.(Clock)
	if !ok {
		return time.Time{}, fmt.Errorf("sequence: Now: %T is not a Clock: %w", s.alloc, errors.ErrUnsupported)
	}
	return c.Now(ctx)
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

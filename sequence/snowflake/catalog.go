package snowflake

import (
	"context"
	"errors"
	"fmt"

	"github.com/sngen/sn/sequence"
)

// Numbering returns "snowflake " and the layout: ids are not counters, so
// a template drawing ids must print numbers disjoint from those of
// templates drawing counters from the same store (see sequence.Numbering).
func (s *Gen) Numbering() string { return "snowflake " + s.l.String() }

// catalog returns the catalog of the store the Leaser keeps its leases
// in.
func (s *Gen) catalog() (sequence.Catalog, error) {
	c, ok := s.opts.Leaser.(sequence.Catalog)
	if !ok {
		return nil, fmt.Errorf("snowflake: the Leaser %T keeps no catalog: %w", s.opts.Leaser, errors.ErrUnsupported)
	}
	return c, nil
}

// Enroll records e in the catalog of the lease store (a
// [sequence.Catalog]), when its Leaser keeps one.
func (s *Gen) Enroll(ctx context.Context, e sequence.Entry, check func([]sequence.Entry) error) (sequence.Entry, error) {
	c, err := s.catalog()
	if err != nil {
		return sequence.Entry{}, err
	}
	return c.Enroll(ctx, e, check)
}

// Entries returns the catalog of the lease store.
func (s *Gen) Entries(ctx context.Context) ([]sequence.Entry, error) {
	c, err := s.catalog()
	if err != nil {
		return nil, err
	}
	return c.Entries(ctx)
}

// Forget removes an entry of the catalog of the lease store.
func (s *Gen) Forget(ctx context.Context, id string) (bool, error) {
	c, err := s.catalog()
	if err != nil {
		return false, err
	}
	return c.Forget(ctx, id)
}

var (
	_ sequence.Catalog   = (*Gen)(nil)
	_ sequence.Numbering = (*Gen)(nil)
)

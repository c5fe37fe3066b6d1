package snowflake

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/record"
)

// Numbering returns "snowflake " and the layout: ids are not counters, so
// a template drawing ids must print numbers disjoint from those of
// templates drawing counters from the same store (see sequence.Numbering).
func (s *Gen) Numbering() string { return "snowflake " + s.l.String() }

// Records returns the records of the store the Leaser keeps its leases
// in, where the catalog of its series is kept; nil when it keeps none.
func (s *Gen) Records() record.Store { return record.Of(s.opts.Leaser) }

var _ sequence.Numbering = (*Gen)(nil)

// KeepsClaims reports whether the Gen keeps idempotency keys: whether its
// Leaser's store does ([sequence.Replayer]). A Gen with a fixed worker
// keeps none, and sn keeps them in the process.
func (s *Gen) KeepsClaims() bool {
	_, ok := s.opts.Leaser.(sequence.Replayer)
	return ok
}

// replayer returns the store the Leaser keeps its leases in, when it
// keeps idempotency keys.
func (s *Gen) replayer() (sequence.Replayer, error) {
	r, ok := s.opts.Leaser.(sequence.Replayer)
	if !ok {
		return nil, fmt.Errorf("snowflake: the Leaser %T keeps no idempotency keys: %w", s.opts.Leaser, errors.ErrUnsupported)
	}
	return r, nil
}

// Claim claims an idempotency key in the lease store (a
// [sequence.Replayer]), when its Leaser keeps them: a retry that reaches
// another process sharing the store gets the ids the first was given.
func (s *Gen) Claim(ctx context.Context, id, digest, token string, lease time.Duration) (sequence.Claim, error) {
	r, err := s.replayer()
	if err != nil {
		return sequence.Claim{}, err
	}
	return r.Claim(ctx, id, digest, token, lease)
}

// Settle records the answer of a claim in the lease store.
func (s *Gen) Settle(ctx context.Context, id, token, answer string, keep time.Duration) error {
	r, err := s.replayer()
	if err != nil {
		return err
	}
	return r.Settle(ctx, id, token, answer, keep)
}

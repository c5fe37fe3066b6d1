package engine

import (
	"context"
	"time"

	"github.com/sngen/sn/sequence"
)

// Holds asks a rendering to hold its numbers rather than draw them: each
// sequence part takes its number with its sequence.Holder's Hold, for
// TTL, and the holds taken are appended to Got. A sequence that is not
// a Holder draws as ever: the caller checks first (Part.Holder).
type Holds struct {
	TTL time.Duration
	Got []sequence.Hold
	// Deadline is the earliest deadline of the holds taken, or, for a
	// call answered from an idempotency key's record, the one recorded.
	Deadline time.Time
}

type holdsKey struct{}

// WithHolds returns a context whose renderings hold their numbers in h.
func WithHolds(ctx context.Context, h *Holds) context.Context {
	return context.WithValue(ctx, holdsKey{}, h)
}

// HoldsOf returns the Holds of ctx, or nil.
func HoldsOf(ctx context.Context) *Holds {
	h, _ := ctx.Value(holdsKey{}).(*Holds)
	return h
}

// hold holds the next number of sequence part s for h, with the checks a
// draw makes of its key (a reset period's, through the guard).
func (pl *Plan) hold(ctx context.Context, s *Part, at time.Time, given bool, vars map[string]string, h *Holds) (int64, error) {
	holder := s.holder
	key, b := pl.callKeyPeriod(s, at, vars)
	if s.guard != nil {
		if err := s.guard.check(ctx, b, at, given, key); err != nil {
			return 0, s.fail(err)
		}
	}
	got, err := holder.Hold(ctx, key, h.TTL)
	if err != nil {
		return 0, s.fail(err)
	}
	if s.guard != nil {
		s.guard.drawn(ctx, at, key)
	}
	h.Got = append(h.Got, got)
	if h.Deadline.IsZero() || got.Deadline.Before(h.Deadline) {
		h.Deadline = got.Deadline
	}
	return got.N, nil
}

// Holder returns the sequence.Holder of sequence part p, or nil when its
// sequence holds no numbers.
func (p *Part) Holder() sequence.Holder { return p.holder }

package sn

import (
	"context"
	"errors"
	"fmt"

	"github.com/sngen/sn/internal/engine"
	"github.com/sngen/sn/sequence"
)

type actorKey struct{}

// WithActor returns a context that names who asks, for the journal
// records a call made with it writes: [Generator.Void] records it as the
// void's actor. sn serve names the token a request came with.
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

// ActorOf returns the actor ctx names ([WithActor]), or "".
func ActorOf(ctx context.Context) string {
	a, _ := ctx.Value(actorKey{}).(string)
	return a
}

// Void records number, which the Generator printed, as void in the
// journal of each counter it was drawn from, with reason and the actor
// ctx names ([WithActor]): the number stays used, never issued again,
// and an audit of the journal lists it as void with its reason. For a
// gapless series it is the only way a number leaves the series unused.
//
// number must fit the template (an error wrapping [ErrInvalidNumber]
// otherwise) and be at or below its counter's mark: a number not issued
// yet cannot be voided. reason must not be empty. A sequence whose store
// keeps no journal ([sequence.Journal]), or whose numbers are not its
// store's counters one to one (snowflake, Balanced), gives an error
// wrapping errors.ErrUnsupported, and nothing is recorded.
func (g *Generator) Void(ctx context.Context, number, reason string) error {
	if reason == "" {
		return fmt.Errorf("sn: Void(%q): %w: give the reason the number is void", number, sequence.ErrInvalidArgument)
	}
	p, err := g.Parse(number)
	if err != nil {
		return err
	}
	type note struct {
		j   sequence.Journal
		key string
		n   int64
	}
	var notes []note
	for _, d := range p.Draws {
		part := g.seqPart(d.Offset)
		if part == nil {
			return fmt.Errorf("sn: Void(%q): no sequence part at offset %d", number, d.Offset)
		}
		j, err := journalOf(part.Gen())
		if err != nil {
			return fmt.Errorf("sn: Void(%q): %s at offset %d: %w", number, part.Name, part.Offset, err)
		}
		notes = append(notes, note{j, d.Key, d.Seq})
	}
	for _, n := range notes {
		if _, err := n.j.Note(ctx, n.key, sequence.Event{Kind: sequence.Voided, Range: sequence.Range{First: n.n, Last: n.n}, Reason: reason, Actor: ActorOf(ctx)}); err != nil {
			return fmt.Errorf("sn: Void(%q): counter %q: %w", number, n.key, err)
		}
	}
	return nil
}

// journalOf returns the journal of the store g draws from, with numbers
// one to one.
func journalOf(g sequence.Gen) (sequence.Journal, error) {
	if n, ok := g.(sequence.Numbering); ok {
		return nil, fmt.Errorf("%w: its numbers (%s) are not its store's counters one to one", errors.ErrUnsupported, n.Numbering())
	}
	j, ok := g.(sequence.Journal)
	if !ok {
		return nil, fmt.Errorf("%w: %T keeps no journal", errors.ErrUnsupported, g)
	}
	return j, nil
}

// seqPart returns the sequence part at offset, or nil.
func (g *Generator) seqPart(offset int) *engine.Part {
	parts := g.plan.Parts()
	for i := range parts {
		if parts[i].Kind == engine.Seq && parts[i].Offset == offset {
			return &parts[i]
		}
	}
	return nil
}

// Journal returns the journal that the counters of the Generator's first
// sequence part are recorded in, for [sequence.ReadJournal] and
// [sequence.Audit]: the counter keys come from [Generator.Parse] or
// [Generator.Key]. It returns an error wrapping errors.ErrUnsupported
// when the store keeps none.
func (g *Generator) Journal() (sequence.Journal, error) {
	parts := g.plan.Parts()
	for i := range parts {
		if parts[i].Kind == engine.Seq {
			return journalOf(parts[i].Gen())
		}
	}
	return nil, fmt.Errorf("sn: %s has no sequence: %w", g.plan.Source(), errors.ErrUnsupported)
}

// Key returns the counter key the Generator's first sequence part draws
// from for r, without drawing: the key whose journal says what became of
// the numbers of r's period and variables. r.N is ignored.
func (g *Generator) Key(r Request) (string, error) {
	parts := g.plan.Parts()
	for i := range parts {
		if parts[i].Kind == engine.Seq {
			return g.plan.CallKey(&parts[i], r.At, r.Vars), nil
		}
	}
	return "", fmt.Errorf("sn: %s has no sequence: %w", g.plan.Source(), errors.ErrUnsupported)
}

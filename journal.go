package sn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sngen/sn/internal/engine"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
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
// yet cannot be voided. One this process holds unissued, or is drawing,
// or one in the range a Redis in front of the ledger serves, is refused
// too; one another process holds unissued cannot be told from one it
// issued, and that process may issue it after the void: void only
// numbers on documents. reason must not be empty. A sequence whose store
// keeps no journal ([journal.Keeper]), or whose numbers are not its
// store's counters one to one (snowflake, Balanced), gives an error
// wrapping errors.ErrUnsupported, and nothing is recorded.
func (g *Generator) Void(ctx context.Context, number, reason string) error {
	err := g.VoidNumbers(ctx, []string{number}, reason)
	if err != nil && !errors.Is(err, ErrInvalidNumber) { // that one names the number
		err = fmt.Errorf("sn: Void(%q): %w", number, err)
	}
	return err
}

// VoidNumbers is [Generator.Void] for many numbers, with one reason: a
// run of consecutive numbers of one counter is one journal record. Every
// number is read back before any is recorded: one that does not fit the
// template voids none. sn serve voids with it the numbers a request drew
// before it failed partway, which the caller never learns.
func (g *Generator) VoidNumbers(ctx context.Context, numbers []string, reason string) error {
	if reason == "" {
		return fmt.Errorf("%w: give the reason the numbers are void", sequence.ErrInvalidArgument)
	}
	type counter struct {
		j   journal.Keeper
		key string
	}
	drawn := map[counter][]int64{}
	var order []counter
	for _, number := range numbers {
		p, err := g.Parse(number)
		if err != nil {
			return err
		}
		for _, d := range p.Draws {
			part := g.seqPart(d.Offset)
			if part == nil {
				return fmt.Errorf("%q: no sequence part at offset %d", number, d.Offset)
			}
			j, err := journalOf(part.Gen())
			if err != nil {
				return fmt.Errorf("%q: %s at offset %d: %w", number, part.Name, part.Offset, err)
			}
			c := counter{j, d.Key}
			if _, seen := drawn[c]; !seen {
				order = append(order, c)
			}
			drawn[c] = append(drawn[c], d.Seq)
		}
	}
	for _, c := range order {
		vals := drawn[c]
		slices.Sort(vals)
		vals = slices.Compact(vals)
		drawn[c] = vals
		if err := voidedBefore(ctx, c.j, c.key, vals); err != nil {
			return err
		}
	}
	for _, c := range order {
		vals := drawn[c]
		for i := 0; i < len(vals); {
			r := sequence.Range{First: vals[i], Last: vals[i]}
			for i++; i < len(vals) && vals[i] == r.Last+1; i++ {
				r.Last = vals[i]
			}
			if _, err := c.j.Note(ctx, c.key, journal.Event{Kind: journal.Voided, Range: r, Reason: reason, Actor: ActorOf(ctx)}); err != nil {
				return fmt.Errorf("counter %q, %v: %w", c.key, r, err)
			}
		}
	}
	return nil
}

// voidedBefore returns an error wrapping sequence.ErrInvalidArgument when
// one of vals, numbers of key's counter in journal j, is void already,
// naming who voided it, when and why: a number is voided once, and the
// journal keeps its first voider.
func voidedBefore(ctx context.Context, j journal.Keeper, key string, vals []int64) error {
	events, head, err := journal.ReadJournal(ctx, j, key)
	if err != nil {
		return fmt.Errorf("counter %q: %w", key, err)
	}
	rep := journal.Audit(key, events, head, time.Now())
	for _, sp := range rep.Spans {
		if sp.State != journal.Void {
			continue
		}
		i, _ := slices.BinarySearch(vals, sp.Range.First)
		if i < len(vals) && vals[i] <= sp.Range.Last {
			return fmt.Errorf("%w: counter %q: number %d is void already: %s; a number is voided once", sequence.ErrInvalidArgument, key, vals[i], sp.Cause())
		}
	}
	return nil
}

// journalOf returns the journal of the store g draws from, with numbers
// one to one.
func journalOf(g sequence.Gen) (journal.Keeper, error) {
	if n, ok := g.(sequence.Numbering); ok {
		return nil, fmt.Errorf("%w: its numbers (%s) are not its store's counters one to one", errors.ErrUnsupported, n.Numbering())
	}
	j := journal.Of(g)
	if j == nil {
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
// sequence part are recorded in, for [journal.ReadJournal] and
// [journal.Audit]: the counter keys come from [Generator.Parse] or
// [Generator.Key]. It returns an error wrapping errors.ErrUnsupported
// when the store keeps none.
func (g *Generator) Journal() (journal.Keeper, error) {
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

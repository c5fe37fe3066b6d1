package sn

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/sngen/sn/internal/engine"
	"github.com/sngen/sn/sequence"
)

// Held is a number [Generator.Hold] reserved, to be committed
// ([Generator.Commit]) or voided ([Generator.VoidHold]) by Deadline.
type Held struct {
	Number   string
	Deadline time.Time
}

// Hold reserves the next number for r, for a document that becomes final
// later (a person completes it, or it is written to another database),
// and returns it with its deadline, now plus ttl. The number is taken
// at once, and the journal records it held; commit it when the document
// is final, or void it (VoidHold) when it is abandoned. A hold neither
// committed nor voided by its deadline is not lost: an audit of the
// journal (sn gaps) reports it as lapsed, and fails, until someone
// commits or voids it.
//
// Every sequence of the template must hold numbers ([sequence.Holder]:
// sqlseq's Gapless); another gives an error wrapping
// errors.ErrUnsupported. r.N must be 0 or 1. An IdempotencyKey works as
// for [Generator.Issue]: a retry gets the same number and deadline, and
// its record is written in the hold's transaction.
func (g *Generator) Hold(ctx context.Context, r Request, ttl time.Duration) (Held, error) {
	if ttl <= 0 {
		return Held{}, fmt.Errorf("sn: hold a number for %v: want a positive time: %w", ttl, sequence.ErrInvalidArgument)
	}
	if r.N > 1 {
		return Held{}, fmt.Errorf("%w: a hold is of one number, and the request asks for %d", ErrTooMany, r.N)
	}
	if err := g.holders(); err != nil {
		return Held{}, err
	}
	if g.clockOnly && !r.At.IsZero() {
		return Held{}, clockOnlyError()
	}
	h := &engine.Holds{TTL: ttl}
	var out Held
	err := g.Transact(ctx, func(ctx context.Context) error {
		b := g.getBatch(1)
		defer g.putBatch(b)
		if err := g.call(engine.WithHolds(ctx, h), b, r); err != nil {
			return err
		}
		out = Held{Number: string(b.Bytes(0)), Deadline: h.Deadline}
		return nil
	})
	if err != nil {
		return Held{}, err
	}
	return out, nil
}

// Commit makes number, which [Generator.Hold] held, final: the journal
// of each counter it was drawn from records it committed. A number not
// held (committed or voided already, never held) gives an error wrapping
// sequence.ErrInvalidArgument, and nothing is recorded. A late commit,
// past the hold's deadline, is taken.
func (g *Generator) Commit(ctx context.Context, number string) error {
	return g.onHeld(ctx, number, "Commit", func(ctx context.Context, h sequence.Holder, key string, n int64) error {
		return h.Commit(ctx, key, n)
	})
}

// VoidHold voids number, which [Generator.Hold] held and nobody has
// committed, with reason and the actor ctx names ([WithActor]): its
// document was abandoned. A number not held gives an error wrapping
// sequence.ErrInvalidArgument, and nothing is recorded: [Generator.Void]
// voids any number, a committed one too, and sn serve asks more of the
// caller for it (the admin action) than for this (issue).
func (g *Generator) VoidHold(ctx context.Context, number, reason string) error {
	if reason == "" {
		return fmt.Errorf("%w: give the reason the number is void", sequence.ErrInvalidArgument)
	}
	return g.onHeld(ctx, number, "VoidHold", func(ctx context.Context, h sequence.Holder, key string, n int64) error {
		return h.VoidHold(ctx, key, n, reason, ActorOf(ctx))
	})
}

// onHeld reads number back and runs op on each of its sequences' draws,
// in one transaction of their store when they draw in one.
func (g *Generator) onHeld(ctx context.Context, number, what string, op func(ctx context.Context, h sequence.Holder, key string, n int64) error) error {
	if err := g.holders(); err != nil {
		return err
	}
	p, err := g.Parse(number)
	if err != nil {
		return err
	}
	err = g.Transact(ctx, func(ctx context.Context) error {
		for _, d := range p.Draws {
			part := g.seqPart(d.Offset)
			if part == nil {
				return fmt.Errorf("%q: no sequence part at offset %d", number, d.Offset)
			}
			if err := op(ctx, part.Holder(), d.Key, d.Seq); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sn: %s(%q): %w", what, number, err)
	}
	return nil
}

// holders returns an error wrapping errors.ErrUnsupported unless every
// sequence of g holds numbers.
func (g *Generator) holders() error {
	seen := false
	for p := range g.seqParts() {
		seen = true
		if p.Holder() == nil {
			return fmt.Errorf("sn: %s: %s at offset %d draws from %T, which holds no numbers (a hold needs a gapless sequence, sqlseq's Gapless): %w",
				g.plan.String(), partLabel(p), p.Offset, p.Gen(), errors.ErrUnsupported)
		}
	}
	if !seen {
		return fmt.Errorf("sn: %s has no sequence to hold a number of: %w", g.plan.String(), errors.ErrUnsupported)
	}
	return nil
}

// Transact runs fn with a context carrying a transaction of the store
// the template's sequences draw in ([sequence.Transactor]: sqlseq's
// Gapless), and commits it when fn returns nil; otherwise it rolls back,
// and with it every number fn drew, its journal records and an
// idempotency key's record. sn serve and the sn command issue a gapless
// template's numbers in Transact, one transaction per request. A
// template whose sequences draw in no transaction runs fn as it is.
//
// The transaction is one, begun by the first such sequence, and every
// other one draws in it: a template's transactional sequences share one
// database, as a transaction given with sqlseq.WithTx must be of the
// database of every Store that draws in it.
func (g *Generator) Transact(ctx context.Context, fn func(ctx context.Context) error) error {
	t := g.transactor()
	if t == nil {
		return fn(ctx)
	}
	return t.Transact(ctx, fn)
}

// Transactional reports whether the template's sequences draw in a
// transaction ([Generator.Transact]): a call to Next must then carry one.
func (g *Generator) Transactional() bool { return g.transactor() != nil }

// transactor returns the first Transactor of g's sequences, or nil.
func (g *Generator) transactor() sequence.Transactor {
	for p := range g.seqParts() {
		if t, ok := p.Gen().(sequence.Transactor); ok {
			return t
		}
	}
	return nil
}

// seqParts yields the sequence parts of g, in order.
func (g *Generator) seqParts() iter.Seq[*engine.Part] {
	return func(yield func(*engine.Part) bool) {
		parts := g.plan.Parts()
		for i := range parts {
			if parts[i].Kind == engine.Seq && !yield(&parts[i]) {
				return
			}
		}
	}
}

package sn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sngen/sn/internal/engine"
	"github.com/sngen/sn/sequence"
)

// An IssueFunc issues the numbers r asks for and appends them to b, as
// [Generator.Append] does. On error, the numbers issued so far may stay
// appended.
type IssueFunc func(ctx context.Context, b *Batch, r Request) error

// A Middleware wraps the call that issues a Generator's numbers: a retry,
// a fallback to other stores, metrics, a log. [New] calls it once, after
// compiling the template, with the Generator being built and next, the
// function it wraps; it returns the function to call instead, which
// usually calls next. An error refuses the Generator: New returns it.
// While it is called, g tells what it is ([Generator.String],
// [Generator.Name], [Generator.Sequences], [Generator.Explain]) but must
// not issue numbers.
//
// Every call of [Generator.Next], [Generator.Issue] and [Generator.Append]
// runs through the middleware, on the caller's goroutine, by one code
// path whatever is installed; [Generator.Preview] does not. So does a
// request refused before it draws (a count out of range, or one a server
// refused: [Generator.Refuse]), as a call that fails, drawing nothing. A request
// with an IdempotencyKey meets the Generator's own link first, outside
// them all: it answers a repeated key with the numbers recorded, and
// passes the first call on, without its key. The function
// returned must be safe for concurrent use and must not keep b or r after
// it returns. A panic in it makes the call return an error wrapping
// [ErrPanic], and numbers the call issued are then a gap. A Generator
// without middleware pays nothing for it.
//
// [Retry], [Fallback] and [Log] are middlewares; so is the metrics
// package's.
type Middleware func(g *Generator, next IssueFunc) (IssueFunc, error)

// WithMiddleware wraps the Generator's issuing call in m, the first
// outermost: it sees each call first and its outcome last. Given more
// than once, the middlewares of later options wrap inside those of
// earlier ones.
func WithMiddleware(m ...Middleware) Option {
	return func(o *options) {
		for i, mw := range m {
			if mw == nil {
				o.errs = append(o.errs, fmt.Errorf("sn: WithMiddleware: middleware %d is nil", i+1))
				return
			}
		}
		o.middleware = append(o.middleware, m...)
	}
}

// wrap builds g's issuing call: the idempotency of keyed requests, then
// ms, then draw.
func (g *Generator) wrap(ms []Middleware) error {
	g.issue = g.draw
	for i := len(ms) - 1; i >= 0; i-- {
		next, err := wrapOne(ms[i], g, g.issue)
		if err != nil {
			return err
		}
		if next == nil {
			return fmt.Errorf("sn: WithMiddleware: middleware %d returned neither a function nor an error", i+1)
		}
		g.issue, g.wrapped = next, true
	}
	g.inner = g.issue
	g.issue = g.idempotent(g.issue)
	return nil
}

// Refuse runs the Generator's middleware for r, a request refused before
// it reached the Generator (a server that could not read it: a bad body,
// an unknown variable), so that what watches each call (metrics, a log)
// sees it too, by the one path of every call: each middleware is called
// as for a call that failed with err, and nothing is drawn. It returns an
// error wrapping [ErrRefused] and err, which [Retry] and [Fallback] pass
// on at once. Without middleware it only returns that error.
func (g *Generator) Refuse(ctx context.Context, r Request, err error) error {
	return g.refuse(ctx, r, fmt.Errorf("%w: %w", ErrRefused, err))
}

// refuse runs g's middleware for r as a call that failed with err, and
// returns err.
func (g *Generator) refuse(ctx context.Context, r Request, err error) (out error) {
	if !g.wrapped {
		return err
	}
	defer func() {
		if v := recover(); v != nil {
			out = fmt.Errorf("%w: a middleware panicked: %v (refusing: %w)", ErrPanic, v, err)
		}
	}()
	if e := g.inner(ctx, &Batch{refused: err}, r); e != nil {
		return e
	}
	return err // a middleware that ended the call without an error
}

// call runs r through g's middleware into b.
//
// With middleware, the request is checked before it (one refused runs
// through it as a call that fails), and what it returns after: a call
// that succeeds has issued exactly the numbers asked for.
func (g *Generator) call(ctx context.Context, b *Batch, r Request) (err error) {
	if !g.wrapped && r.IdempotencyKey == "" {
		return g.draw(ctx, b, r)
	}
	count, err := r.count()
	if err != nil {
		return g.refuse(ctx, r, err) // seen by the middleware, drawing nothing
	}
	n := b.Len()
	defer func() {
		if v := recover(); v != nil {
			b.truncate(n)
			err = fmt.Errorf("%w: a middleware panicked: %v", ErrPanic, v)
		}
	}()
	if err := g.issue(ctx, b, r); err != nil {
		return err
	}
	if got := b.Len() - n; got != count {
		b.truncate(n) // a gap
		return fmt.Errorf("sn: a middleware of %s issued %d numbers for a request of %d", g.plan.String(), got, count)
	}
	return nil
}

// wrapOne calls m, turning a panic into an error wrapping ErrPanic.
func wrapOne(m Middleware, g *Generator, next IssueFunc) (f IssueFunc, err error) {
	defer func() {
		if v := recover(); v != nil {
			f, err = nil, fmt.Errorf("%w: a middleware panicked in New: %v", ErrPanic, v)
		}
	}()
	return m(g, next)
}

// Name returns the template's name given by [WithName], or "".
func (g *Generator) Name() string { return g.name }

// Sequences returns the sequences the template draws from, by their name
// in the template: to report on or to ping their stores.
func (g *Generator) Sequences() map[string]sequence.Gen {
	seqs := map[string]sequence.Gen{}
	for _, p := range g.plan.Parts() {
		if p.Kind == engine.Seq {
			seqs[p.Name] = p.Gen()
		}
	}
	return seqs
}

// Retry is a middleware that issues again, after a short pause (1 ms,
// doubling up to 100 ms), a call that failed for a reason that may pass —
// a store that is down or slow, a sequence that failed — as long as the
// call has not lasted longer than within since its first failure and its
// context is not done. After that the call fails with the last error.
// Numbers a failed attempt issued are a gap, never returned.
//
// Errors that issuing again cannot cure are returned at once: a done
// context, a missing or bad variable, an instant the template cannot
// print, a count above MaxN, a panic, another obfuscation key, a
// template the store's catalog refuses, a counter past its width
// ([ErrOverflow]) or past its last number (sequence.ErrExhausted), a
// closed store.
func Retry(within time.Duration) Middleware {
	return func(g *Generator, next IssueFunc) (IssueFunc, error) {
		if within <= 0 {
			return nil, fmt.Errorf("sn: Retry(%v): want a positive duration", within)
		}
		return func(ctx context.Context, b *Batch, r Request) error {
			n := b.Len()
			err := next(ctx, b, r)
			if err == nil || !retryable(ctx, err) || spent(err) {
				return err
			}
			first, pause := time.Now(), time.Millisecond
			for time.Since(first)+pause <= within {
				t := time.NewTimer(pause)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					b.truncate(n)
					return errors.Join(err, ctx.Err())
				}
				b.truncate(n)
				prev := err
				if err = next(ctx, b, r); err == nil {
					return nil
				}
				if !retryable(ctx, err) || spent(err) {
					b.truncate(n)
					if ctx.Err() != nil && !errors.Is(err, prev) {
						// The context ended during the attempt: say why
						// the call was retrying, too.
						return errors.Join(prev, err)
					}
					return err
				}
				pause = min(2*pause, 100*time.Millisecond)
			}
			b.truncate(n) // the last attempt failed too: its numbers are a gap
			return err
		}, nil
	}
}

// Fallback is a middleware that issues a call from fb when it failed for
// a reason that may pass (as for [Retry]), or because the series has run
// out of numbers ([ErrOverflow], sequence.ErrExhausted) or its store is
// closed: fb is a template on other
// stores, say "B-@<seq, width=8>" on a second database for when the
// first is down. The call runs through fb's own middleware. Numbers the
// failed attempt issued are a gap.
//
// A fallback must never print a number the Generator could print, from
// any counter: the middleware proves, when New calls it, that fb cannot,
// with the proof of [CheckSet] taking the two as separate stores, and
// refuses the pair otherwise with an *[AmbiguityError] and a witness.
// Give the fallback a prefix or a shape of its own; then the two series
// can never meet, whatever their stores do. fb's own fallbacks are proven
// against the Generator as well, since a call that falls back runs
// through fb's middleware. When fb fails too, the call returns no number.
//
// To retry before falling back, give Fallback first:
// WithMiddleware(Fallback(fb), Retry(time.Second)).
func Fallback(fb *Generator) Middleware {
	return func(g *Generator, next IssueFunc) (IssueFunc, error) {
		if fb == nil {
			return nil, errors.New("sn: Fallback(nil)")
		}
		// fb issues through its own middleware, and so through its own
		// fallbacks: g is proven against each of them.
		for i, other := range append([]*Generator{fb}, fb.fallbacks...) {
			name := "its fallback"
			if i > 0 {
				name = fmt.Sprintf("its fallback's fallback %s", other.plan.String())
			}
			err := CheckSet([]Member{{Name: "the Generator", Gen: g, Store: "primary"}, {Name: name, Gen: other, Store: "fallback"}})
			if err != nil {
				return nil, fmt.Errorf("sn: Fallback: %w", err)
			}
		}
		g.fallbacks = append(append(g.fallbacks, fb), fb.fallbacks...)
		return func(ctx context.Context, b *Batch, r Request) error {
			n := b.Len()
			err := next(ctx, b, r)
			if err == nil || !retryable(ctx, err) {
				return err
			}
			b.truncate(n)
			if ferr := fb.call(ctx, b, r); ferr != nil {
				b.truncate(n) // the numbers of a failed attempt are a gap
				return fmt.Errorf("sn: the fallback failed too: %w (the Generator's error: %v)", ferr, err)
			}
			return nil
		}, nil
	}
}

// Log is a middleware that logs every call to l: one that issued its
// numbers at level Info, with the template's name, the count, the first
// and last number and the time taken; one that failed at level Warn,
// with the error. It is an audit trail of what was issued when; numbers a
// failed call issued are a gap, and its record says so.
func Log(l *slog.Logger) Middleware {
	return func(g *Generator, next IssueFunc) (IssueFunc, error) {
		if l == nil {
			return nil, errors.New("sn: Log(nil)")
		}
		name := g.Name()
		if name == "" {
			name = g.String()
		}
		return func(ctx context.Context, b *Batch, r Request) error {
			start, n := time.Now(), b.Len()
			err := next(ctx, b, r)
			took := time.Since(start)
			if err != nil {
				l.LogAttrs(ctx, slog.LevelWarn, "sn: issue failed", slog.String("template", name),
					slog.Int("n", max(r.N, 1)), slog.Int("gap", b.Len()-n), slog.Duration("took", took), slog.Any("err", err))
				return err
			}
			if b.Len() == n {
				return nil
			}
			l.LogAttrs(ctx, slog.LevelInfo, "sn: issued", slog.String("template", name),
				slog.Int("n", b.Len()-n), slog.String("first", string(b.Bytes(n))), slog.String("last", string(b.Bytes(b.Len()-1))),
				slog.Duration("took", took))
			return nil
		}, nil
	}
}

// spent reports whether err says the series or its store is done: issuing
// again from it cannot cure it, another series (a fallback) can.
func spent(err error) bool {
	return errors.Is(err, ErrOverflow) || errors.Is(err, sequence.ErrExhausted) || errors.Is(err, sequence.ErrClosed)
}

// retryable reports whether err, of a call with context ctx, may pass
// when the call is made again, or from a fallback.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	for _, e := range []error{ErrRefused, ErrVarMissing, ErrVarInvalid, ErrInstant, ErrTooMany, ErrPanic, ErrKey, ErrAmbiguous, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, e) {
			return false
		}
	}
	return true
}

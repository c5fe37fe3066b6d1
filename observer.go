package sn

import (
	"context"
	"errors"

	"github.com/sngen/sn/internal/engine"
	"github.com/sngen/sn/sequence"
)

// An Observer is told how every call that issues numbers ended: a
// metric, a trace, an audit log. Unlike [Hooks], an Observer cannot
// change a call, so any number of them may be given, with any hooks; the
// metrics package is one.
//
// Open is called once, by [New], with the sequences the template draws
// from by name, so that the Observer can report on their stores. Observe
// is called when a call ends, after the hooks, on the caller's goroutine:
// with a nil err when the call issued the c.N numbers it asked for, or
// with the error the call returns. c.Numbers holds the numbers, except
// after AppendNext and AppendNextN on a Generator without [Hooks]: those
// leave them in the caller's buffer only, so that observing costs no
// string per number. Observe must be fast and safe for concurrent use,
// and must not keep or change c. An Observer that panics makes the call return an
// error wrapping [ErrPanic], and numbers it issued are then a gap.
//
// A call that [WithFallback]'s Generator answers is observed by the
// Generator's observers (c.Fallback is then true), not the fallback's.
type Observer interface {
	Open(seqs map[string]sequence.Gen)
	Observe(ctx context.Context, c *Call, err error)
}

// WithObserver adds o to the Generator's observers. See [Observer].
func WithObserver(o Observer) Option {
	return func(opts *options) {
		if o == nil {
			opts.errs = append(opts.errs, errors.New("sn: WithObserver(nil)"))
			return
		}
		opts.observers = append(opts.observers, o)
	}
}

// openObservers tells each observer of g the sequences of g's template.
func (g *Generator) openObservers() error {
	if len(g.observers) == 0 {
		return nil
	}
	seqs := map[string]sequence.Gen{}
	for _, p := range g.plan.Parts() {
		if p.Kind == engine.Seq {
			seqs[p.Name] = p.Gen()
		}
	}
	for _, o := range g.observers {
		if err := callHook("Observer's Open", func() error { o.Open(seqs); return nil }); err != nil {
			return err
		}
	}
	return nil
}

// observed tells the observers how a call issued without hooks, and
// without strings, ended.
func (g *Generator) observed(ctx context.Context, c *Call, err error) error {
	c.Attempt = 1
	_, err = g.observe(ctx, c, nil, err)
	return err
}

// observe tells each observer how c ended, and returns err, or an error
// wrapping ErrPanic if an observer panicked.
func (g *Generator) observe(ctx context.Context, c *Call, nums []string, err error) ([]string, error) {
	if err == nil {
		c.Numbers = nums
	}
	for _, o := range g.observers {
		if perr := callHook("Observer", func() error { o.Observe(ctx, c, err); return nil }); perr != nil {
			return nil, errors.Join(err, perr)
		}
	}
	return nums, err
}

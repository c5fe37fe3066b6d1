package sn

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Hooks run around every call that issues numbers (Next, NextWith, NextAt,
// AppendNext, NextN, NextNAt), in this order:
//
//  1. Before, with the call. An error it returns ends the call before
//     anything is drawn.
//  2. The numbers are drawn and printed.
//  3. On success, After, with the numbers: an audit log, a metric.
//  4. On an error from a sequence (a store that is down or slow, a
//     sequence that failed), OnError, which returns the [Rejection]: fail,
//     retry for up to a bound, or fall back to the Generator given with
//     [WithFallback]. After a retry or a fall back, step 3 or 4 runs again
//     for the new attempt.
//
// Errors that retrying cannot cure do not reach OnError: a done context,
// a missing or bad variable, an instant the template cannot print, a
// count above MaxN, a hook's own panic.
//
// Hooks run on the caller's goroutine and must be safe for concurrent use.
// A hook that panics makes the call return an error wrapping [ErrPanic]; a
// panic in After comes after the numbers were drawn, and those numbers are
// then a gap.
//
// A Generator without hooks pays nothing for them.
type Hooks struct {
	Before  func(ctx context.Context, c *Call) error
	After   func(ctx context.Context, c *Call)
	OnError func(ctx context.Context, c *Call) Rejection
}

// Call is one call of a Generator, as its [Hooks] see it. Hooks must not
// keep it or change it.
type Call struct {
	Template string    // the canonical template of the Generator issuing
	At       time.Time // the instant passed to the call; zero means the clock
	Vars     Vars      // the per-call variables
	N        int       // how many numbers were asked for
	Started  time.Time // when the call began, for latency metrics

	Attempt  int      // 1 for the first draw, then 2, 3... for retries and a fall back
	Fallback bool     // the attempt draws from the fallback Generator
	Numbers  []string // in After: the numbers issued
	Err      error    // in OnError: the error of the attempt
}

// Rejection is what [Hooks.OnError] decides about a failed attempt. The
// zero Rejection is [Fail].
type Rejection struct {
	retry    bool
	fallback bool
	within   time.Duration
}

// Fail ends the call with the attempt's error.
func Fail() Rejection { return Rejection{} }

// Retry draws again after a short pause (1 ms, doubling up to 100 ms), as
// long as the call has not lasted longer than within since its first
// failure and its context is not done; after that the call fails with the
// last error. Numbers a failed attempt drew are a gap, never issued.
func Retry(within time.Duration) Rejection { return Rejection{retry: true, within: within} }

// FallBack issues the call's numbers from the Generator given with
// [WithFallback]. Without one, the call fails with an error saying so.
func FallBack() Rejection { return Rejection{fallback: true} }

// WithHooks sets the hooks run around each call. See [Hooks].
func WithHooks(h Hooks) Option {
	return func(o *options) {
		if o.hooks != nil {
			o.errs = append(o.errs, errors.New("sn: WithHooks given twice"))
			return
		}
		o.hooks = &h
	}
}

// WithFallback gives the Generator a second one to issue from when
// [Hooks.OnError] returns [FallBack]: a template on other stores (say
// "B-@<seq, width=8>" on a second database when the first is down).
//
// A fallback must never print a number the Generator could print, from
// any counter: New proves that it cannot, with the proof of [CheckSet]
// taking the two as separate stores, and refuses the pair otherwise with
// an *[AmbiguityError] and a witness. Give the fallback a prefix or a
// shape of its own; then the two series can never meet, whatever their
// stores do. The fallback's own hooks do not run.
func WithFallback(g *Generator) Option {
	return func(o *options) {
		switch {
		case g == nil:
			o.errs = append(o.errs, errors.New("sn: WithFallback(nil)"))
		case o.fallback != nil:
			o.errs = append(o.errs, errors.New("sn: WithFallback given twice"))
		default:
			o.fallback = g
		}
	}
}

// checkFallback proves that fb never prints a number g could print.
func checkFallback(g, fb *Generator) error {
	err := CheckSet([]Member{{Name: "the Generator", Gen: g, Store: "primary"}, {Name: "its fallback", Gen: fb, Store: "fallback"}})
	if err != nil {
		return fmt.Errorf("sn: WithFallback: %w", err)
	}
	return nil
}

// retryable reports whether an attempt's error goes to OnError.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	for _, e := range []error{ErrVarMissing, ErrVarInvalid, ErrInstant, ErrTooMany, ErrPanic, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, e) {
			return false
		}
	}
	return true
}

// hooked runs one call through g's hooks, then tells its observers how
// it ended: draw is the call itself, on the Generator given (g or its
// fallback). It returns the numbers and the error of the last attempt.
func (g *Generator) hooked(ctx context.Context, c *Call, draw func(*Generator) ([]string, error)) ([]string, error) {
	nums, err := g.attempts(ctx, c, draw)
	if len(g.observers) == 0 {
		return nums, err
	}
	return g.observe(ctx, c, nums, err)
}

// attempts runs one call through g's hooks, if it has any.
func (g *Generator) attempts(ctx context.Context, c *Call, draw func(*Generator) ([]string, error)) ([]string, error) {
	h := g.hooks
	if h == nil {
		h = &Hooks{}
	}
	if h.Before != nil {
		if err := callHook("Before", func() error { return h.Before(ctx, c) }); err != nil {
			return nil, err
		}
	}
	from := g
	var firstFailure time.Time
	pause := time.Millisecond
	for c.Attempt = 1; ; c.Attempt++ {
		c.Fallback = from != g
		nums, err := draw(from)
		if err == nil {
			if h.After != nil {
				c.Numbers = nums
				if err := callHook("After", func() error { h.After(ctx, c); return nil }); err != nil {
					return nil, err
				}
			}
			return nums, nil
		}
		if h.OnError == nil || !retryable(ctx, err) || from != g {
			return nums, err
		}
		c.Err = err
		var r Rejection
		if perr := callHook("OnError", func() error { r = h.OnError(ctx, c); return nil }); perr != nil {
			return nums, errors.Join(err, perr)
		}
		c.Err = nil
		switch {
		case r.fallback:
			if g.fallback == nil {
				return nums, fmt.Errorf("%w (OnError chose FallBack, but the Generator has no WithFallback)", err)
			}
			from = g.fallback
		case r.retry:
			now := time.Now()
			if firstFailure.IsZero() {
				firstFailure = now
			}
			if now.Sub(firstFailure)+pause > r.within {
				return nums, err
			}
			t := time.NewTimer(pause)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nums, errors.Join(err, ctx.Err())
			}
			pause = min(2*pause, 100*time.Millisecond)
		default:
			return nums, err
		}
	}
}

// callHook runs a hook, turning a panic into an error wrapping ErrPanic.
func callHook(name string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: the %s hook panicked: %v", ErrPanic, name, r)
		}
	}()
	return f()
}

// Package host connects an expression.Context to the engine that evaluates
// a template. Package expression keeps the fields of its Context private;
// the engine implements [Host] and asks package expression, through
// [Wrap], for a Context that reads from it. Nothing outside this module can
// import it, so the Context stays a closed, read-only view for the authors
// of custom expressions.
package host

import (
	"context"
	"time"
)

// Host is what a Context reads during one call: the engine's state while it
// renders a number or reads one back.
type Host interface {
	// Context is the call's context.Context.
	Context() context.Context
	// Time is the call's instant, read from the clock at most once.
	Time() time.Time
	// Var returns a variable: a setter's value or a per-call value.
	Var(name string) (string, bool)
	// Seq returns the sequence value and its text as printed.
	Seq() (n int64, text []byte, ok bool)
	// Printed returns the text printed before the part being evaluated.
	Printed() []byte
	// Preview reports whether the call is a preview.
	Preview() bool
}

// Wrap returns a *expression.Context reading from h. Package expression
// sets it when it is initialized, before any engine code runs.
var Wrap func(h Host) any

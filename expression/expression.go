// Package expression is how sn is extended: the parts a number is made of.
//
// A template such as "@<ownerKey, value=SN>-@<seq, width=8>" is made of
// parts. Literal text, variables and sequences are built into sn; every
// other part is an [Expression] built by a [Factory] registered under a
// name (sn.RegisterExpression, or Registry.RegisterExpression of a registry
// given with sn.WithRegistry). A factory
// receives the arguments written in the template and checks them; it runs
// once, when the template is compiled, so a bad argument is an error at
// sn.New and never at Next. The built-in expressions date, checksum and
// random are expressions too, in every registry (sn.NewRegistry); the
// package sn documents their arguments.
//
// While a number is built, each part appends its text to it and reads what
// it needs from a [Context]: the instant, the per-call variables, the
// sequence value, the text printed before it.
//
// Optional interfaces let an expression take part in the proof that a
// template never prints one string for two numbers, and in reading numbers
// back: [Patterner] describes exactly what the part can print, as a regular
// expression; [Checker] checks the text read back for it. sn treats an
// expression without a Pattern as able to print any text up to its MaxLen,
// and so refuses templates where that text could run into its neighbours.
package expression

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/sngen/sn/parser"
)

// Expression is one part of a number. Implementations must be safe for
// concurrent use: one compiled template serves many goroutines, each with its
// own [Context].
type Expression interface {
	// Append appends the part's text to dst and returns the extended slice.
	// Errors are reported to the caller of Next, with the part's name and
	// position added.
	Append(dst []byte, c *Context) ([]byte, error)
	// Order says when the part is evaluated relative to the others.
	Order() Order
	// MaxLen returns the most bytes Append can add, or -1 when unbounded.
	MaxLen() int
}

// Order is the evaluation stage of an [Expression]: what [Context.Printed]
// holds when it runs. The sequences of a number are drawn before any part
// is evaluated; then parts are evaluated by Order, then by template
// position. The output always follows template position.
type Order int8

const (
	// Before parts run first.
	Before Order = iota
	// Normal parts run next: most custom parts.
	Normal
	// After parts run last, when everything printed before them is known:
	// check characters.
	After
)

// String returns "Before", "Normal" or "After".
func (o Order) String() string {
	switch o {
	case Before:
		return "Before"
	case Normal:
		return "Normal"
	case After:
		return "After"
	}
	return "Order(" + strconv.Itoa(int(o)) + ")"
}

// Factory builds an Expression from the arguments written in a template.
// It is called once per template when the template is compiled. It should
// reject unknown or bad arguments with an [*ArgError] (see [Args.Check]) so
// the error points at the argument in the template.
type Factory func(args Args) (Expression, error)

// Args are the arguments of one template part: "@<name, width=8, grow>"
// gives Args{"width": "8", "grow": "true"}.
type Args map[string]string

// Patterner is implemented by an Expression that can describe everything
// it prints as an RE2 regular expression, without capturing groups or
// anchors: Append must only ever print strings the pattern matches in
// full. sn uses it to prove at New that no two numbers print alike, for
// Generator.Regexp and to read numbers back; it checks at Next that the
// part printed what its pattern promises.
type Patterner interface {
	Pattern() string
}

// Checker is implemented by an Expression that can check the text read
// back for it when a number is parsed. Check is called once the number has
// been split into parts; c gives the variables, the sequence value and the
// text printed before the part, as read from the number.
type Checker interface {
	Check(part string, c *Context) error
}

// ErrBadArg is wrapped by every [*ArgError].
var ErrBadArg = errors.New("expression: bad argument")

// ArgError reports a bad argument of a template part. Arg names the
// argument ("" when the problem is a missing one or the part as a whole).
type ArgError struct {
	Arg string
	Msg string
}

// Error returns Msg.
func (e *ArgError) Error() string { return e.Msg }

// Unwrap returns [ErrBadArg].
func (e *ArgError) Unwrap() error { return ErrBadArg }

// Errorf returns an [*ArgError] for argument arg.
func Errorf(arg, format string, a ...any) error {
	return &ArgError{Arg: arg, Msg: fmt.Sprintf(format, a...)}
}

// Check returns an [*ArgError] for the first argument (in sorted order)
// that is not in known, with a "did you mean" hint for a likely typo.
func (a Args) Check(known ...string) error {
	var unknown []string
	for k := range a {
		found := false
		for _, n := range known {
			if k == n {
				found = true
				break
			}
		}
		if !found {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	s := append([]string(nil), known...)
	sort.Strings(s)
	if m := parser.Closest(unknown[0], s); m != "" {
		return Errorf(unknown[0], "unknown argument %q: did you mean %s?", unknown[0], m)
	}
	hint := "takes no arguments"
	if len(known) > 0 {
		hint = "known: " + strings.Join(s, ", ")
	}
	return Errorf(unknown[0], "unknown argument %q (%s)", unknown[0], hint)
}

// Int returns argument key as an int in [min, max], or def when absent.
// Spellings such as "08" and "+8" read as 8.
func (a Args) Int(key string, def, min, max int) (int, error) {
	s, ok := a[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < min || n > max {
		return 0, Errorf(key, "%s=%q: want a whole number from %d to %d", key, s, min, max)
	}
	return n, nil
}

// OneOf returns argument key, which must be one of choices, or def when
// absent.
func (a Args) OneOf(key, def string, choices ...string) (string, error) {
	s, ok := a[key]
	if !ok {
		return def, nil
	}
	for _, c := range choices {
		if s == c {
			return s, nil
		}
	}
	return "", Errorf(key, "%s=%q: want one of %s", key, s, strings.Join(choices, ", "))
}

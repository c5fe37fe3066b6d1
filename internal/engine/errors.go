package engine

import (
	"fmt"
	"strings"

	"github.com/sngen/sn/internal/sentinel"
	"github.com/sngen/sn/parser"
)

// The sentinels of package sn (package sentinel), under the names sn
// exports them by, so that the engine can wrap them.
var (
	ErrTemplate      = sentinel.Template
	ErrAmbiguous     = sentinel.Ambiguous
	ErrOverflow      = sentinel.Overflow
	ErrVarMissing    = sentinel.VarMissing
	ErrVarInvalid    = sentinel.VarInvalid
	ErrInstant       = sentinel.Instant
	ErrSequence      = sentinel.Sequence
	ErrPanic         = sentinel.Panic
	ErrTooMany       = sentinel.TooMany
	ErrInvalidNumber = sentinel.InvalidNumber
	ErrPart          = sentinel.Part
	ErrKey           = sentinel.Key
)

// TemplateError is an error in a template at a byte offset. It wraps
// ErrTemplate and the *parser.Error that says where.
type TemplateError struct {
	At *parser.Error
	// Err is an extra error to match, such as an *Ambiguity, or nil.
	Err error
}

// Error returns "sn: " and the *parser.Error's message.
func (e *TemplateError) Error() string { return "sn: " + e.At.Error() }

// Unwrap returns ErrTemplate, the *parser.Error and Err.
func (e *TemplateError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrTemplate, e.At, e.Err}
	}
	return []error{ErrTemplate, e.At}
}

func errAt(src string, off int, format string, a ...any) error {
	return &TemplateError{At: &parser.Error{Template: src, Offset: off, Msg: fmt.Sprintf(format, a...)}}
}

// PartError is an error from one part of a number, naming the part and its
// position in the template.
type PartError struct {
	Name   string
	Offset int
	Err    error
}

// Error returns "sn: NAME at offset N: " and the part's error.
func (e *PartError) Error() string {
	return fmt.Sprintf("sn: %s at offset %d: %s", e.Name, e.Offset, strings.TrimPrefix(e.Err.Error(), "sn: "))
}

// Unwrap returns the part's own error.
func (e *PartError) Unwrap() error { return e.Err }

func (p *Part) fail(err error) error { return &PartError{Name: p.label(), Offset: p.Offset, Err: err} }

// recovered turns a value recovered from a panic in user code into an
// error.
func recovered(r any) error { return fmt.Errorf("%w: %v", ErrPanic, r) }

package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sngen/sn/parser"
)

// The sentinels of package sn, defined here so that the engine can wrap
// them; sn re-exports each under the same name.
var (
	ErrTemplate      = errors.New("sn: bad template")
	ErrAmbiguous     = errors.New("sn: ambiguous template")
	ErrOverflow      = errors.New("sn: number does not fit its width")
	ErrVarMissing    = errors.New("sn: variable missing")
	ErrVarInvalid    = errors.New("sn: variable invalid")
	ErrInstant       = errors.New("sn: instant out of range")
	ErrSequence      = errors.New("sn: sequence returned a number that is not positive")
	ErrPanic         = errors.New("sn: panic")
	ErrTooMany       = errors.New("sn: too many numbers in one call")
	ErrInvalidNumber = errors.New("sn: invalid number")
	ErrPart          = errors.New("sn: part printed text outside its pattern")
	ErrKey           = errors.New("sn: obfuscation key does not match the series")
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

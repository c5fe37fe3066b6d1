package sn

import (
	"errors"
	"fmt"

	"github.com/sngen/sn/expression"
)

var (
	// ErrOverflow means a sequence number does not fit the width of its
	// part under overflow=error (the default). The number is consumed and
	// skipped: a gap, never a wrong-length number. Use overflow=grow to let
	// numbers grow past the width.
	ErrOverflow = expression.ErrOverflow

	// ErrVarMissing means a per-call variable that the template prints was
	// not given, or was empty.
	ErrVarMissing = expression.ErrVarMissing

	// ErrVarInvalid means a per-call variable's value breaks the limits the
	// template sets for it.
	ErrVarInvalid = expression.ErrVarInvalid

	// ErrPanic is wrapped by the error returned when a registered
	// expression or sequence panics.
	ErrPanic = expression.ErrPanic

	// ErrTemplate is wrapped by every error [New] returns for a bad
	// template; errors.As with a *parser.Error gives its offset.
	ErrTemplate = errors.New("sn: bad template")

	// ErrInvalidNumber is wrapped by every error [Generator.Validate]
	// returns; errors.As with a *[ValidationError] gives the details.
	ErrInvalidNumber = errors.New("sn: invalid number")
)

// templateError wraps a *parser.Error so that errors.Is finds ErrTemplate and
// errors.As finds the *parser.Error.
type templateError struct{ err error }

func (e *templateError) Error() string   { return "sn: " + e.err.Error() }
func (e *templateError) Unwrap() []error { return []error{ErrTemplate, e.err} }

// ValidationError says why [Generator.Validate] refused a number.
type ValidationError struct {
	// Number is the text given to Validate.
	Number string
	// Part is the name of the template part that does not match ("seq",
	// "date", ...), or "" when the number is too long or too short.
	Part string
	// Offset is the byte offset of Part in the template, or -1.
	Offset int
	// Pos is the byte offset in Number where the problem starts.
	Pos int
	// Err describes the problem.
	Err error
}

func (e *ValidationError) Error() string {
	if e.Part == "" {
		return fmt.Sprintf("sn: invalid number %q: %v", e.Number, e.Err)
	}
	return fmt.Sprintf("sn: invalid number %q: %s at offset %d: %v", e.Number, e.Part, e.Offset, e.Err)
}

// Unwrap returns ErrInvalidNumber and the part's own error.
func (e *ValidationError) Unwrap() []error { return []error{ErrInvalidNumber, e.Err} }

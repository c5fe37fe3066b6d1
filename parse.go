package sn

import (
	"errors"
	"fmt"

	"github.com/sngen/sn/internal/engine"
)

// Parsed is what a number reads back as: the counter it was drawn from,
// the number, and the variables. See [Generator.Parse].
type Parsed struct {
	// Key is the counter key of the template's (first) sequence part, and
	// Seq the number drawn from it.
	Key string
	Seq int64
	// Vars are the variables read back: per-call ones and those the
	// template sets.
	Vars Vars
	// Draws has the counter key and the number of every sequence part, in
	// template position; Draws[0] is Key and Seq.
	Draws []Draw
}

// Parse reads s back: the inverse of [Generator.Issue]. For every number
// the Generator prints, Parse returns the counter key and the number that
// were drawn for it, and the variables it printed; New's proof guarantees
// that no other key and number could have printed s. (Variables that are
// not part of a counter key are read back too, but where the template
// lets two of them meet, a different split may be chosen.)
//
// Parse checks what Validate checks; its error wraps [ErrInvalidNumber]
// and is a *[ValidationError].
func (g *Generator) Parse(s string) (Parsed, error) {
	r, err := g.plan.Parse(s)
	if err != nil {
		return Parsed{}, validationError(err)
	}
	p := Parsed{Key: r.Key, Seq: r.Seq, Vars: Vars(r.Vars)}
	for _, d := range r.Draws {
		p.Draws = append(p.Draws, Draw(d))
	}
	return p, nil
}

// Validate reports whether s is a number this template could have produced:
// its structure, widths, real dates (no month 13, no 30 February), check
// characters and the checks of custom parts. The error wraps
// [ErrInvalidNumber] and is a *[ValidationError] saying which part is
// wrong. Validate cannot know whether s was actually issued.
func (g *Generator) Validate(s string) error {
	_, err := g.plan.Parse(s)
	if err != nil {
		return validationError(err)
	}
	return nil
}

// ValidationError says why [Generator.Validate] or [Generator.Parse]
// refused a number.
type ValidationError struct {
	// Number is the text given to Validate.
	Number string
	// Part is the name of the template part that does not match ("seq",
	// "date", "text", ...), or "" when the number goes on after the
	// template ends.
	Part string
	// Offset is the byte offset of Part in the template, or -1.
	Offset int
	// Pos is the byte offset in Number where the problem starts.
	Pos int
	// Err describes the problem.
	Err error
}

// Error returns "sn: invalid number NUMBER: PART at offset N: " and the
// problem.
func (e *ValidationError) Error() string {
	if e.Part == "" {
		return fmt.Sprintf("sn: invalid number %q: %v", e.Number, e.Err)
	}
	return fmt.Sprintf("sn: invalid number %q: %s at offset %d: %v", e.Number, e.Part, e.Offset, e.Err)
}

// Unwrap returns ErrInvalidNumber and the part's own error.
func (e *ValidationError) Unwrap() []error { return []error{ErrInvalidNumber, e.Err} }

func validationError(err error) error {
	var in *engine.Invalid
	if errors.As(err, &in) {
		return &ValidationError{Number: in.Number, Part: in.Part, Offset: in.Offset, Pos: in.Pos, Err: in.Err}
	}
	return err
}

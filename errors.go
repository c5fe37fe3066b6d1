package sn

import (
	"errors"
	"time"

	"github.com/sngen/sn/internal/engine"
	"github.com/sngen/sn/internal/sentinel"
	"github.com/sngen/sn/parser"
)

var (
	// ErrTemplate is wrapped by every error [New] returns for a bad
	// template; errors.As with a *parser.Error gives its offset.
	ErrTemplate = errors.New("sn: bad template")

	// ErrAmbiguous is wrapped by the error of [New] for a template that can
	// print one string for two different counter keys or numbers, and by
	// that of [CheckSet] for two templates that can print one string from
	// two counters. The error is an *[AmbiguityError] with a witness.
	ErrAmbiguous = errors.New("sn: ambiguous template")

	// ErrOverflow means a sequence number does not fit the width of its
	// part under overflow=error (the default). The number is consumed and
	// skipped: a gap, never a wrong-length number. Use overflow=grow to let
	// numbers grow past the width.
	ErrOverflow = errors.New("sn: number does not fit its width")

	// ErrVarMissing means a per-call variable that the template prints was
	// not given, or was empty. Nothing was drawn.
	ErrVarMissing = errors.New("sn: variable missing")

	// ErrVarInvalid means a per-call variable's value breaks the limits the
	// template sets for it: maxlen, chars, or for a variable without chars
	// a character the template prints as literal text. Nothing was drawn.
	ErrVarInvalid = errors.New("sn: variable invalid")

	// ErrInstant means the instant of a call is one the template's dates
	// cannot print: a year outside 0000-9999, or outside the window of a yy
	// date; or, for a counter per hour, minute or second, an instant given
	// more than half the retention before the store's time, whose counter
	// may be gone (see [WithRetention]). Nothing was drawn.
	ErrInstant = errors.New("sn: instant out of range")

	// ErrKey means the key of an obfuscate=NAME part is not the key its
	// series was issued with: the store records a check value of the key
	// (a keyed hash that does not reveal it) with the first number, and
	// refuses to draw or raise a floor with another key, which would
	// print, read back and floor every number wrongly. Nothing was drawn.
	ErrKey = errors.New("sn: obfuscation key does not match the series")

	// ErrSequence means a sequence returned zero or a negative number, or
	// a batch of another size than asked for. The numbers are not printed.
	ErrSequence = errors.New("sn: sequence returned a number that is not positive")

	// ErrPanic is wrapped by the error returned when a registered
	// expression or sequence, or a [Middleware], panics.
	ErrPanic = errors.New("sn: panic")

	// ErrTooMany means a [Request] asked for more than [MaxN] numbers, or
	// for a negative count. Nothing was drawn.
	ErrTooMany = errors.New("sn: too many numbers in one call")

	// ErrRefused is wrapped by the error of [Generator.Refuse]: a request
	// refused before it reached the Generator, such as one sn serve could
	// not read. Nothing was drawn, and no middleware issues it again.
	ErrRefused = errors.New("sn: request refused")

	// ErrPart means a custom expression printed text outside the language
	// its Pattern declares, or longer than its MaxLen. The number drawn for
	// the call is skipped.
	ErrPart = errors.New("sn: part printed text outside its pattern")

	// ErrInvalidNumber is wrapped by every error [Generator.Validate] and
	// [Generator.Parse] return; errors.As with a *[ValidationError] gives
	// the details.
	ErrInvalidNumber = errors.New("sn: invalid number")

	// ErrIdempotencyConflict means a [Request]'s IdempotencyKey was used
	// before, within [IdempotencyWindow], with another request (count,
	// instant or variables): nothing was issued. Use a new key for a new
	// request.
	ErrIdempotencyConflict = errors.New("sn: idempotency key used with another request")

	// ErrInProgress means a [Request]'s IdempotencyKey belongs to a call
	// still under way (in this or another process), which has not
	// recorded its numbers yet: nothing was issued. Ask again in a moment:
	// the answer will be that call's numbers.
	ErrInProgress = errors.New("sn: idempotency key in use by a call under way")
)

// init makes the engine's errors match the sentinels above: the engine
// wraps their kinds (package sentinel), which cannot import this package.
func init() {
	sentinel.Export(sentinel.Template, ErrTemplate)
	sentinel.Export(sentinel.Ambiguous, ErrAmbiguous)
	sentinel.Export(sentinel.Overflow, ErrOverflow)
	sentinel.Export(sentinel.VarMissing, ErrVarMissing)
	sentinel.Export(sentinel.VarInvalid, ErrVarInvalid)
	sentinel.Export(sentinel.Instant, ErrInstant)
	sentinel.Export(sentinel.Sequence, ErrSequence)
	sentinel.Export(sentinel.Panic, ErrPanic)
	sentinel.Export(sentinel.TooMany, ErrTooMany)
	sentinel.Export(sentinel.InvalidNumber, ErrInvalidNumber)
	sentinel.Export(sentinel.Part, ErrPart)
	sentinel.Export(sentinel.Key, ErrKey)
	sentinel.Export(sentinel.Conflict, ErrIdempotencyConflict)
	sentinel.Export(sentinel.InProgress, ErrInProgress)
}

// VarError is a per-call variable that is missing or invalid: the errors
// wrapping [ErrVarMissing] and [ErrVarInvalid] that issuing returns are
// *VarError, whose Name says which variable.
type VarError struct {
	// Name is the variable's name.
	Name string
	// Err says what is wrong with it; it wraps ErrVarMissing or
	// ErrVarInvalid.
	Err error
}

// Error returns Err's message, which names the variable.
func (e *VarError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *VarError) Unwrap() error { return e.Err }

// callError is err as a call that issues returns it: the engine's
// *VarError as a *VarError.
func callError(err error) error {
	if err == nil {
		return nil
	}
	return varError(err)
}

// varError is callError of an error, out of line: its errors.As target
// escapes, and a call that succeeds must not allocate it.
func varError(err error) error {
	var ve *engine.VarError
	if errors.As(err, &ve) {
		return &VarError{Name: ve.Name, Err: err}
	}
	return err
}

// AmbiguityError is the refusal of a template, or of two templates of a
// set, that can print one string twice: for two different counter keys,
// or for two different numbers of one key. Witness shows it.
type AmbiguityError struct {
	// Template is the template text; for [CheckSet], that of Witness.A's
	// member.
	Template string
	// Offset is the byte offset in Template of the part at fault, Part its
	// name ("text" for literal text).
	Offset int
	Part   string
	// Witness is the string and the two inputs that print it.
	Witness Witness
	// Hint says what would fix it.
	Hint string

	err error // the message, and for New the *parser.Error
}

// Witness is one string printed for two different (counter key, number)
// pairs.
type Witness struct {
	// Number is the string both inputs print.
	Number string
	// A and B are the two inputs.
	A, B Input
	// Verified reports that both inputs were rendered and print Number.
	// When it is false, the template was refused because sn could not rule
	// out that some inputs print it (A and B are then one reading each of
	// Number, which the template's check characters or dates may not
	// allow).
	Verified bool
}

// Input is one side of a witness: what a caller passes, and what the
// sequences (and any random or custom part) give.
type Input struct {
	// Template is, for [CheckSet], the name of the member; "" for New.
	Template string
	// Vars are the per-call variables.
	Vars Vars
	// At is the instant; zero when the template prints no date.
	At time.Time
	// Draws are the counter key and number of each sequence part.
	Draws []Draw
	// Fill is what random and custom parts print, by "name@offset".
	Fill map[string]string
}

// Draw is the counter key and the number of one sequence part.
type Draw struct {
	// Part is the sequence's name and Offset its byte offset in the
	// template.
	Part   string
	Offset int
	// Key is the counter key, Seq the number.
	Key string
	Seq int64
}

// Error returns the refusal with the witness and, for New, the caret
// excerpt of the template.
func (e *AmbiguityError) Error() string { return e.err.Error() }

// Unwrap returns ErrAmbiguous and, for an error of New, ErrTemplate and the
// *parser.Error giving the offset.
func (e *AmbiguityError) Unwrap() []error {
	out := []error{ErrAmbiguous}
	var pe *parser.Error
	if errors.As(e.err, &pe) {
		out = append(out, ErrTemplate, pe)
	}
	return out
}

// publicError turns an error of the engine into the one sn documents.
func publicError(err error) error {
	var a *engine.Ambiguity
	if !errors.As(err, &a) {
		return err
	}
	e := &AmbiguityError{Offset: a.Offset, Part: a.Part, Hint: a.Hint, err: err, Witness: Witness{
		Number: a.Number, A: publicInput(a.A), B: publicInput(a.B), Verified: a.Verified,
	}}
	var te *engine.TemplateError
	if errors.As(err, &te) {
		e.Template = te.At.Template
	}
	return e
}

func publicInput(in engine.Input) Input {
	out := Input{Template: in.Template, Vars: Vars(in.Vars), At: in.At, Fill: in.Fill}
	for _, d := range in.Draws {
		out.Draws = append(out.Draws, Draw(d))
	}
	return out
}

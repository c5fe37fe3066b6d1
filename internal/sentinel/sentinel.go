// Package sentinel names the sentinel errors of package sn for the
// packages below it, which cannot import sn: the engine wraps them, and
// package wire maps sn serve's error codes to them, so that the Go client
// matches sn's sentinels without linking the engine.
//
// A sentinel here is a [Kind]. Package sn creates its exported values
// (sn.ErrTemplate...) with errors.New, so that they are real values that
// go doc shows, and records each with [Export] as it initialises. A Kind
// then matches its value: errors.Is(err, sn.ErrTemplate) holds for an
// error that wraps Template, and [Kind.Public] gives the value itself.
package sentinel

import "errors"

// Kind is one of package sn's sentinel errors.
type Kind uint8

// The sentinels, under their names in package sn without the Err.
const (
	Template Kind = iota + 1
	Ambiguous
	Overflow
	VarMissing
	VarInvalid
	Instant
	Sequence
	Panic
	TooMany
	InvalidNumber
	Part
	Key
	Conflict
	InProgress
	numKinds
)

// text is each sentinel's message, which package sn's value has too.
var text = [numKinds]string{
	Template:      "sn: bad template",
	Ambiguous:     "sn: ambiguous template",
	Overflow:      "sn: number does not fit its width",
	VarMissing:    "sn: variable missing",
	VarInvalid:    "sn: variable invalid",
	Instant:       "sn: instant out of range",
	Sequence:      "sn: sequence returned a number that is not positive",
	Panic:         "sn: panic",
	TooMany:       "sn: too many numbers in one call",
	InvalidNumber: "sn: invalid number",
	Part:          "sn: part printed text outside its pattern",
	Key:           "sn: obfuscation key does not match the series",
	Conflict:      "sn: idempotency key used with another request",
	InProgress:    "sn: idempotency key in use by a call under way",
}

// public holds package sn's values, once it has initialised. It is
// written only then, before any goroutine of the program can read it.
var public [numKinds]error

// Export records err as package sn's value of k. Package sn calls it once
// per sentinel as it initialises; it panics if err's message is not k's,
// which only a change to sn can cause.
func Export(k Kind, err error) error {
	if err == nil || err.Error() != text[k] {
		panic("sentinel: sn exports " + text[k] + " as a different error")
	}
	public[k] = err
	return err
}

// Error returns k's message.
func (k Kind) Error() string { return text[k] }

// Is reports whether target is package sn's value of k, so that an error
// that wraps k matches it.
func (k Kind) Is(target error) bool { return target != nil && target == public[k] }

// Public returns package sn's value of k, or k itself in a program that
// does not link package sn (whose code then cannot name sn's value).
func (k Kind) Public() error {
	if err := public[k]; err != nil {
		return err
	}
	return k
}

// Matches reports whether err wraps k, as the engine's errors do, or
// package sn's value of k, as an error made outside the engine (by a
// middleware, say) may.
func Matches(err error, k Kind) bool {
	return errors.Is(err, k) || public[k] != nil && errors.Is(err, public[k])
}

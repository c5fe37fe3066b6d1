// Package sentinel holds the sentinel errors of package sn in a package
// that imports nothing else: the engine wraps them, sn exports them, and
// package wire maps sn serve's error codes to them, so that the Go client
// matches sn's sentinels without linking the engine.
package sentinel

import "errors"

// The sentinels, under their names in package sn without the Err.
var (
	Template      = errors.New("sn: bad template")
	Ambiguous     = errors.New("sn: ambiguous template")
	Overflow      = errors.New("sn: number does not fit its width")
	VarMissing    = errors.New("sn: variable missing")
	VarInvalid    = errors.New("sn: variable invalid")
	Instant       = errors.New("sn: instant out of range")
	Sequence      = errors.New("sn: sequence returned a number that is not positive")
	Panic         = errors.New("sn: panic")
	TooMany       = errors.New("sn: too many numbers in one call")
	InvalidNumber = errors.New("sn: invalid number")
	Part          = errors.New("sn: part printed text outside its pattern")
	Key           = errors.New("sn: obfuscation key does not match the series")
)

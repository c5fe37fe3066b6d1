package checksum

import (
	"errors"
	"fmt"
	"strconv"
)

// Errors returned by this package. Test for them with [errors.Is]; the
// returned errors wrap them with the algorithm name and details.
var (
	// ErrUnknown is returned by [Lookup] for a name no algorithm is
	// registered under.
	ErrUnknown = errors.New("checksum: unknown algorithm")
	// ErrAlphabet is wrapped by an [*AlphabetError] when a payload holds a
	// character outside the algorithm's input alphabet.
	ErrAlphabet = errors.New("checksum: character outside the alphabet")
	// ErrEmpty is returned by Compute for an empty payload, also by
	// algorithms with a fixed payload length.
	ErrEmpty = errors.New("checksum: empty payload")
	// ErrLength is returned by Compute for a non-empty payload whose length
	// the algorithm does not allow, such as an s10 payload that is not
	// exactly 8 digits long. The length is checked before the alphabet.
	ErrLength = errors.New("checksum: payload length not allowed")
)

// AlphabetError reports a payload character outside an algorithm's input
// alphabet. It wraps [ErrAlphabet].
type AlphabetError struct {
	// Algorithm is the name of the algorithm, such as "luhn".
	Algorithm string
	// Char is the offending character, or utf8.RuneError when the payload
	// is not valid UTF-8 at Index.
	Char rune
	// Index is the byte offset of Char in the payload.
	Index int
}

// Error returns a message such as
// "checksum: luhn: 'A' at index 3 is not a digit".
func (e *AlphabetError) Error() string {
	want := "is outside the alphabet"
	if a, ok := builtin[e.Algorithm]; ok {
		want = a.class.describe()
	}
	return "checksum: " + e.Algorithm + ": " + strconv.QuoteRune(e.Char) +
		" at index " + strconv.Itoa(e.Index) + " " + want
}

// Unwrap returns [ErrAlphabet].
func (e *AlphabetError) Unwrap() error { return ErrAlphabet }

// payloadError is an [ErrEmpty] or [ErrLength] error with the algorithm's
// name and details.
type payloadError struct {
	algorithm string
	msg       string
	sentinel  error
}

func (e *payloadError) Error() string { return "checksum: " + e.algorithm + ": " + e.msg }

func (e *payloadError) Unwrap() error { return e.sentinel }

func errEmpty(algorithm string) error {
	return &payloadError{algorithm: algorithm, msg: "empty payload", sentinel: ErrEmpty}
}

func errLength(algorithm string, got, want int) error {
	return &payloadError{
		algorithm: algorithm,
		msg:       fmt.Sprintf("payload has %d characters, want %d", got, want),
		sentinel:  ErrLength,
	}
}

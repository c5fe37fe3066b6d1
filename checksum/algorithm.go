package checksum

import "unicode/utf8"

// text is a payload in either of the forms the algorithms accept, so that
// Compute and AppendCheck share one implementation without converting.
type text interface {
	string | []byte
}

// class is an input alphabet.
type class uint8

const (
	digits   class = iota // 0-9
	alphanum              // 0-9 and A-Z
)

// describe completes the sentence "'c' at index i ...".
func (c class) describe() string {
	if c == alphanum {
		return "is not a digit or upper-case letter A-Z"
	}
	return "is not a digit"
}

// contains reports whether b is in the alphabet.
func (c class) contains(b byte) bool {
	if c == alphanum {
		return alnumValue[b] >= 0
	}
	return b-'0' <= 9
}

// alnumValue maps '0'-'9' to 0-9 and 'A'-'Z' to 10-35; every other byte maps
// to -1.
var alnumValue = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := range 10 {
		t['0'+i] = int8(i)
	}
	for i := range 26 {
		t['A'+i] = int8(10 + i)
	}
	return t
}()

// Check-character tables. The check value v of a one-character algorithm is
// the byte out[v]; for mod97-10 it is out[2v:2v+2].
const (
	decimalOut = "0123456789"
	mod11Out   = "0123456789X"
	mod37Out   = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ*"
)

// twoDigitsOut holds "00", "01", ..., "99".
var twoDigitsOut = func() string {
	b := make([]byte, 0, 200)
	for i := range 100 {
		b = append(b, byte('0'+i/10), byte('0'+i%10))
	}
	return string(b)
}()

// algorithm is the implementation of every built-in [Algorithm]. The
// arithmetic lives in a generic function instantiated for string (Compute,
// Validate) and []byte (AppendCheck); it returns the check value, an index
// into out, or false when a payload byte is outside the alphabet.
type algorithm struct {
	name    string
	class   class
	fixed   int    // required payload length; 0 allows any non-empty payload
	width   int    // check characters per value
	out     string // check characters, width bytes per value
	pattern string

	fromString func(string) (int, bool)
	fromBytes  func([]byte) (int, bool)
}

// Name returns the name a is registered under.
func (a *algorithm) Name() string { return a.name }

// Len returns the number of check characters.
func (a *algorithm) Len() int { return a.width }

// Pattern returns an RE2 fragment matching exactly the check characters.
func (a *algorithm) Pattern() string { return a.pattern }

// Compute returns the check characters for payload.
func (a *algorithm) Compute(payload string) (string, error) {
	if err := a.checkLen(len(payload)); err != nil {
		return "", err
	}
	v, ok := a.fromString(payload)
	if !ok {
		return "", a.alphabetError(payload)
	}
	return a.out[v*a.width : (v+1)*a.width], nil
}

// AppendCheck appends the check characters for payload to dst.
func (a *algorithm) AppendCheck(dst, payload []byte) ([]byte, error) {
	if err := a.checkLen(len(payload)); err != nil {
		return dst, err
	}
	v, ok := a.fromBytes(payload)
	if !ok {
		return dst, a.alphabetError(string(payload))
	}
	if a.width == 1 {
		return append(dst, a.out[v]), nil
	}
	return append(dst, a.out[v*a.width:(v+1)*a.width]...), nil
}

// Validate reports whether s is a payload followed by its check characters.
func (a *algorithm) Validate(s string) bool {
	n := len(s) - a.width
	if n <= 0 || (a.fixed > 0 && n != a.fixed) {
		return false
	}
	v, ok := a.fromString(s[:n])
	return ok && s[n:] == a.out[v*a.width:(v+1)*a.width]
}

func (a *algorithm) checkLen(n int) error {
	if n == 0 {
		return errEmpty(a.name)
	}
	if a.fixed > 0 && n != a.fixed {
		return errLength(a.name, n, a.fixed)
	}
	return nil
}

// alphabetError returns an [*AlphabetError] for the first byte of payload
// outside a's alphabet. The alphabets are ASCII, so that byte starts the
// offending character.
func (a *algorithm) alphabetError(payload string) error {
	for i := 0; i < len(payload); i++ {
		if !a.class.contains(payload[i]) {
			r, _ := utf8.DecodeRuneInString(payload[i:])
			return &AlphabetError{Algorithm: a.name, Char: r, Index: i}
		}
	}
	// Unreachable: the arithmetic rejects only bytes outside the alphabet.
	return &AlphabetError{Algorithm: a.name, Char: utf8.RuneError, Index: -1}
}

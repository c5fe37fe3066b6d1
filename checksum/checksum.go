// Package checksum computes and verifies check characters: the digit or
// letter at the end of a number that catches typing mistakes.
//
// Algorithms are looked up by name with [Lookup]; [Names] lists them. Each
// algorithm has an input alphabet, and a character outside it is an error
// from Compute, never silently skipped.
//
// The built-in algorithms are:
//
//	name      payload           check       guaranteed to catch
//	luhn      digits            [0-9]       single errors; adjacent transpositions but 09/90
//	verhoeff  digits            [0-9]       single errors; adjacent transpositions
//	damm      digits            [0-9]       single errors; adjacent transpositions
//	gs1       digits            [0-9]       single errors (GTIN-8/12/13/14, GLN, SSCC)
//	s10       exactly 8 digits  [0-9]       - (UPU S10 postal item number: RR000000014CN)
//	mod11-2   digits            [0-9X]      single errors; adjacent transpositions (ISNI, ORCID)
//	mod11-10  digits            [0-9]       single errors (ISO 7064 hybrid MOD 11,10)
//	mod37-2   digits, A-Z       [0-9A-Z*]   single errors; adjacent transpositions
//	mod97-10  digits, A-Z       02 to 98    single errors; adjacent transpositions (IBAN)
//	jd        digits            [0-9]       - (n*9%31%10, JD.com's order-number check digit)
//
// A single error is one character replaced by another of the alphabet,
// check characters included. The guarantees of mod97-10 hold for decimal
// payloads; a letter counts as the two digits of its value (A = 10 ...
// Z = 35), as in IBAN, where the caller moves the country code and check
// digits to the end before computing. s10 and jd are here for compatibility
// with the numbers they define; their check digits catch most but not all
// single errors.
//
// Payload alphabets are case-exact: lower-case letters are outside the
// alphabet of mod37-2 and mod97-10 and make Compute fail with an
// [*AlphabetError], and Validate rejects a lower-case "x" check character of
// mod11-2. Numbers that sn prints are upper-case, so a lower-case letter is a
// typing mistake, not an alternative spelling; callers that want to accept
// one upper-case the input first.
//
// Every built-in algorithm also implements [Appender], which appends the
// check characters to a caller's buffer without allocating. Compute on a
// built-in algorithm does not allocate either: the string it returns is a
// slice of a constant table.
//
// The algorithms are immutable and safe for concurrent use. The package
// imports nothing of sn and can be used on its own.
package checksum

// Algorithm is a check-character algorithm. Implementations are immutable and
// safe for concurrent use.
type Algorithm interface {
	// Name returns the name the algorithm is registered under.
	Name() string
	// Compute returns the check character(s) for payload. It returns an
	// error wrapping ErrAlphabet for a character outside the algorithm's
	// input alphabet, and ErrEmpty (or ErrLength, where the algorithm fixes
	// the length) for a payload it cannot check.
	Compute(payload string) (string, error)
	// Validate reports whether s is a payload followed by its correct check
	// character(s).
	Validate(s string) bool
	// Len returns the number of check characters Compute returns.
	Len() int
	// Pattern returns an RE2 fragment, without capturing groups, that
	// matches exactly the check characters Compute can return,
	// for example "[0-9]" or "[0-9X]".
	Pattern() string
}

// Appender is an optional interface of an [Algorithm] for hot paths that
// render into a reusable buffer. Every algorithm returned by [Lookup]
// implements it; find it with a type assertion and fall back to
// [Algorithm.Compute] otherwise:
//
//	if ap, ok := alg.(checksum.Appender); ok {
//		buf, err = ap.AppendCheck(buf, payload)
//	}
type Appender interface {
	// AppendCheck appends the check character(s) for payload to dst and
	// returns the extended buffer. It accepts the same payloads as Compute
	// and returns the same errors; on error it returns dst unchanged. It
	// does not allocate when dst has room for Len more bytes.
	AppendCheck(dst, payload []byte) ([]byte, error)
}

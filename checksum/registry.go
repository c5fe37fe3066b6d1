package checksum

import (
	"fmt"
	"slices"
	"strings"
)

// decimal returns a built-in algorithm with one check digit 0-9.
func decimal(name string, class class, fixed int, fromString func(string) (int, bool), fromBytes func([]byte) (int, bool)) *algorithm {
	return &algorithm{
		name: name, class: class, fixed: fixed,
		width: 1, out: decimalOut, pattern: "[0-9]",
		fromString: fromString, fromBytes: fromBytes,
	}
}

// builtin holds the algorithms of this package by name. It is never
// modified after initialisation, so reading it is safe for concurrent use.
var builtin = func() map[string]*algorithm {
	all := []*algorithm{
		decimal("luhn", digits, 0, luhn[string], luhn[[]byte]),
		decimal("verhoeff", digits, 0, verhoeff[string], verhoeff[[]byte]),
		decimal("damm", digits, 0, damm[string], damm[[]byte]),
		decimal("gs1", digits, 0, gs1[string], gs1[[]byte]),
		decimal("s10", digits, len(s10Weights), s10[string], s10[[]byte]),
		decimal("mod11-10", digits, 0, mod11x10[string], mod11x10[[]byte]),
		decimal("jd", digits, 0, jd[string], jd[[]byte]),
		{
			name: "mod11-2", class: digits,
			width: 1, out: mod11Out, pattern: "[0-9X]",
			fromString: mod11x2[string], fromBytes: mod11x2[[]byte],
		},
		{
			name: "mod37-2", class: alphanum,
			width: 1, out: mod37Out, pattern: "[0-9A-Z*]",
			fromString: mod37x2[string], fromBytes: mod37x2[[]byte],
		},
		{
			// Check values run from 02 to 98.
			name: "mod97-10", class: alphanum,
			width: 2, out: twoDigitsOut, pattern: "(?:0[2-9]|[1-8][0-9]|9[0-8])",
			fromString: mod97x10[string], fromBytes: mod97x10[[]byte],
		},
	}
	m := make(map[string]*algorithm, len(all))
	for _, a := range all {
		if _, dup := m[a.name]; dup {
			panic("checksum: algorithm " + a.name + " registered twice")
		}
		m[a.name] = a
	}
	return m
}()

// sortedNames is the sorted list of builtin's keys.
var sortedNames = func() []string {
	names := make([]string, 0, len(builtin))
	for name := range builtin {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}()

// Lookup returns the algorithm registered under name, such as "luhn" or
// "mod97-10". Names are case-sensitive. For an unknown name it returns an
// error wrapping [ErrUnknown] that lists the known names. The returned
// [Algorithm] also implements [Appender]. Lookup is safe for concurrent use.
func Lookup(name string) (Algorithm, error) {
	if a, ok := builtin[name]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknown, name, strings.Join(sortedNames, ", "))
}

// Names returns the names of all algorithms, sorted. The caller owns the
// returned slice. Names is safe for concurrent use.
func Names() []string {
	return slices.Clone(sortedNames)
}

// Builtin reports whether a is one of this package's algorithms, as
// [Lookup] returns them, rather than an Algorithm of the caller's own. A
// builtin algorithm always prints Len characters that its Pattern matches,
// so sn need not check what it prints.
func Builtin(a Algorithm) bool {
	b, ok := a.(*algorithm)
	return ok && builtin[b.name] == b
}

// Package lang describes the strings a template part can print as a small
// automaton over runes, and decides whether a sequence of parts can split one
// string in two ways.
//
// A part's language is an [NFA] without empty moves: literal text, a class of
// characters repeated between two lengths counted in bytes, or any RE2
// pattern (compiled through regexp/syntax). A template is a [Chain] of parts;
// [Ambiguous] runs two copies of chains side by side over the same input (the
// product or "squaring" construction) and finds the shortest string that two
// runs split differently in the parts that matter.
//
// Every string the package deals with is valid UTF-8; lengths are in bytes.
package lang

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// Range is an inclusive range of runes.
type Range struct{ Lo, Hi rune }

// Set is a set of runes: sorted, non-overlapping, non-adjacent ranges of
// valid runes (surrogates excluded). The zero Set is empty.
type Set []Range

// Any is every valid rune.
var Any = Set{{0, 0xD7FF}, {0xE000, utf8.MaxRune}}

// Printable is every rune a number may print where people read it: all
// but the controls (C0, DEL, C1), the line and paragraph separators, the
// zero-width and bidirectional format characters (which reorder or hide
// text: U+202E shows "gnp.exe" for "exe.png"), the byte order mark and
// the specials, the private planes, and the characters that show nothing
// (fillers, variation selectors, the grapheme joiner, the braille blank),
// which would make two numbers that look the same.
var Printable = Any.Minus(NewSet(
	Range{0, 0x1F}, Range{0x7F, 0x9F}, // C0, DEL, C1
	Range{0xAD, 0xAD},        // soft hyphen
	Range{0x034F, 0x034F},    // combining grapheme joiner
	Range{0x061C, 0x061C},    // Arabic letter mark
	Range{0x115F, 0x1160},    // Hangul fillers
	Range{0x17B4, 0x17B5},    // Khmer inherent vowels
	Range{0x180B, 0x180F},    // Mongolian variation selectors and vowel separator
	Range{0x200B, 0x200F},    // zero-width spaces and joiners, LRM, RLM
	Range{0x2028, 0x202E},    // line and paragraph separators, bidi embeddings and overrides
	Range{0x2060, 0x206F},    // word joiner, invisible operators, bidi isolates, deprecated formats
	Range{0x2800, 0x2800},    // braille blank
	Range{0x3164, 0x3164},    // Hangul filler
	Range{0xFDD0, 0xFDEF},    // noncharacters
	Range{0xFE00, 0xFE0F},    // variation selectors
	Range{0xFEFF, 0xFEFF},    // byte order mark
	Range{0xFFA0, 0xFFA0},    // halfwidth Hangul filler
	Range{0xFFF0, 0xFFFF},    // specials and noncharacters
	Range{0x1D173, 0x1D17A},  // musical formatting
	Range{0xE0000, 0xE007F},  // tags
	Range{0xE0100, 0xE01EF},  // variation selectors supplement
	Range{0xF0000, 0x10FFFF}, // private use planes
))

// Digits is 0-9.
var Digits = Set{{'0', '9'}}

// NewSet returns the set of the runes in the given ranges (inclusive pairs),
// normalized: sorted, merged, surrogates removed.
func NewSet(rs ...Range) Set {
	s := make(Set, 0, len(rs))
	for _, r := range rs {
		if r.Lo <= r.Hi {
			s = append(s, r)
		}
	}
	sort.Slice(s, func(i, j int) bool { return s[i].Lo < s[j].Lo })
	out := s[:0]
	for _, r := range s {
		if n := len(out); n > 0 && r.Lo <= out[n-1].Hi+1 {
			out[n-1].Hi = max(out[n-1].Hi, r.Hi)
			continue
		}
		out = append(out, r)
	}
	return out.And(Any)
}

// Runes returns the set of the runes of s.
func Runes(s string) Set {
	var rs []Range
	for _, r := range s {
		rs = append(rs, Range{r, r})
	}
	return NewSet(rs...)
}

// And returns the intersection of s and t.
func (s Set) And(t Set) Set {
	var out Set
	i, j := 0, 0
	for i < len(s) && j < len(t) {
		lo, hi := max(s[i].Lo, t[j].Lo), min(s[i].Hi, t[j].Hi)
		if lo <= hi {
			out = append(out, Range{lo, hi})
		}
		if s[i].Hi < t[j].Hi {
			i++
		} else {
			j++
		}
	}
	return out
}

// Meets reports whether s and t share a rune, without building the
// intersection.
func (s Set) Meets(t Set) bool {
	i, j := 0, 0
	for i < len(s) && j < len(t) {
		if max(s[i].Lo, t[j].Lo) <= min(s[i].Hi, t[j].Hi) {
			return true
		}
		if s[i].Hi < t[j].Hi {
			i++
		} else {
			j++
		}
	}
	return false
}

// Minus returns the runes of s that are not in t.
func (s Set) Minus(t Set) Set {
	return s.And(t.complement())
}

func (s Set) complement() Set {
	var out Set
	next := rune(0)
	for _, r := range s {
		if r.Lo > next {
			out = append(out, Range{next, r.Lo - 1})
		}
		next = r.Hi + 1
	}
	if next <= utf8.MaxRune {
		out = append(out, Range{next, utf8.MaxRune})
	}
	return out.And(Any)
}

// Has reports whether r is in s.
func (s Set) Has(r rune) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].Hi >= r })
	return i < len(s) && s[i].Lo <= r
}

// Empty reports whether s has no rune.
func (s Set) Empty() bool { return len(s) == 0 }

// Size returns the number of runes in s.
func (s Set) Size() int {
	n := 0
	for _, r := range s {
		n += int(r.Hi-r.Lo) + 1
	}
	return n
}

// Nth returns the n-th rune of s (0-based), n < Size().
func (s Set) Nth(n int) rune {
	for _, r := range s {
		if k := int(r.Hi-r.Lo) + 1; n >= k {
			n -= k
			continue
		}
		return r.Lo + rune(n)
	}
	return utf8.RuneError
}

// ASCII reports whether every rune of s is one byte long in UTF-8.
func (s Set) ASCII() bool { return s.Minus(Set{{0, 0x7F}}).Empty() }

// byLen returns the runes of s whose UTF-8 encoding is n bytes long.
func (s Set) byLen(n int) Set {
	bounds := [...]Range{{0, 0x7F}, {0x80, 0x7FF}, {0x800, 0xFFFF}, {0x10000, utf8.MaxRune}}
	return s.And(Set{bounds[n-1]})
}

// readable are the runes a witness prefers, in order.
const readable = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_."

// Pick returns a rune of s that reads well in a message: a digit or a
// letter if s has one, else the first graphic ASCII rune, else the first.
// s must not be empty.
func (s Set) Pick() rune {
	for _, r := range readable {
		if s.Has(r) {
			return r
		}
	}
	if t := s.And(Set{{0x21, 0x7E}}); len(t) > 0 {
		return t[0].Lo
	}
	return s[0].Lo
}

// String returns s as the inside of an RE2 character class, such as "0-9A-Z".
func (s Set) String() string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(classRune(r.Lo))
		if r.Hi > r.Lo {
			if r.Hi > r.Lo+1 {
				b.WriteByte('-')
			}
			b.WriteString(classRune(r.Hi))
		}
	}
	return b.String()
}

func classRune(r rune) string {
	switch {
	case strings.ContainsRune(`\]^-[`, r):
		return `\` + string(r)
	case r < 0x20 || r == 0x7F || !utf8.ValidRune(r):
		return `\x{` + strings.ToUpper(strconvHex(r)) + `}`
	}
	return string(r)
}

func strconvHex(r rune) string {
	const hex = "0123456789abcdef"
	if r == 0 {
		return "0"
	}
	var b []byte
	for r > 0 {
		b = append([]byte{hex[r&0xF]}, b...)
		r >>= 4
	}
	return string(b)
}

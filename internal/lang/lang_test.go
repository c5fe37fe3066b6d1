package lang

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"
	"unicode/utf8"
)

func TestNewSet(t *testing.T) {
	tests := []struct {
		name string
		in   []Range
		want Set
	}{
		{"none", nil, nil},
		{"one rune", []Range{{'a', 'a'}}, Set{{'a', 'a'}}},
		{"inverted range dropped", []Range{{'z', 'a'}}, nil},
		{"sorted", []Range{{'x', 'z'}, {'a', 'c'}}, Set{{'a', 'c'}, {'x', 'z'}}},
		{"adjacent merged", []Range{{'d', 'f'}, {'a', 'c'}}, Set{{'a', 'f'}}},
		{"overlapping merged", []Range{{'a', 'm'}, {'c', 'z'}}, Set{{'a', 'z'}}},
		{"contained merged", []Range{{'a', 'z'}, {'c', 'd'}}, Set{{'a', 'z'}}},
		{"duplicates merged", []Range{{'0', '9'}, {'0', '9'}, {'5', '5'}}, Set{{'0', '9'}}},
		{"gap kept", []Range{{'a', 'b'}, {'d', 'e'}}, Set{{'a', 'b'}, {'d', 'e'}}},
		{"surrogates removed from a range", []Range{{0xD000, 0xE100}}, Set{{0xD000, 0xD7FF}, {0xE000, 0xE100}}},
		{"only surrogates", []Range{{0xD800, 0xDFFF}}, nil},
		{"one surrogate", []Range{{0xDC00, 0xDC00}}, nil},
		{"negative runes removed", []Range{{-5, 'a'}}, Set{{0, 'a'}}},
		{"beyond MaxRune removed", []Range{{0x10FFF0, 0x110005}}, Set{{0x10FFF0, 0x10FFFF}}},
		{"everything", []Range{{-1, 0x7FFFFFFF}}, Any},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.in)
			got := NewSet(tt.in...)
			if !equalSets(got, tt.want) {
				t.Errorf("NewSet(%v) = %v, want %v", tt.in, got, tt.want)
			}
			if !slices.Equal(in, tt.in) {
				t.Errorf("NewSet changed its argument: %v, was %v", tt.in, in)
			}
		})
	}
}

// equalSets compares sets, an empty one equal to nil.
func equalSets(a, b Set) bool {
	return len(a) == 0 && len(b) == 0 || slices.Equal(a, b)
}

func TestRunes(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Set
	}{
		{"empty", "", nil},
		{"sorted and merged", "hello", Set{{'e', 'e'}, {'h', 'h'}, {'l', 'l'}, {'o', 'o'}}},
		{"consecutive", "cab", Set{{'a', 'c'}}},
		{"multi-byte", "é-€", Set{{'-', '-'}, {'é', 'é'}, {'€', '€'}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Runes(tt.in); !equalSets(got, tt.want) {
				t.Errorf("Runes(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestSetOps(t *testing.T) {
	az := Set{{'a', 'z'}}
	tests := []struct {
		name      string
		s, u      Set
		and, diff Set // s.And(u), s.Minus(u)
	}{
		{"disjoint", Digits, az, nil, Digits},
		{"adjacent ranges do not meet", Set{{'a', 'c'}}, Set{{'d', 'f'}}, nil, Set{{'a', 'c'}}},
		{"hole", az, Set{{'m', 'm'}}, Set{{'m', 'm'}}, Set{{'a', 'l'}, {'n', 'z'}}},
		{"edges", az, Set{{'0', 'a'}, {'z', 0x10FFFF}}, Set{{'a', 'a'}, {'z', 'z'}}, Set{{'b', 'y'}}},
		{"several ranges each side", Set{{'0', '9'}, {'A', 'Z'}, {'a', 'z'}}, Set{{'5', 'C'}, {'x', 'é'}},
			Set{{'5', '9'}, {'A', 'C'}, {'x', 'z'}}, Set{{'0', '4'}, {'D', 'Z'}, {'a', 'w'}}},
		{"subset", Digits, Set{{'0', '9'}}, Digits, nil},
		{"empty left", nil, Digits, nil, nil},
		{"empty right", Digits, nil, nil, Digits},
		{"any minus digits", Any, Digits, Digits, Set{{0, '0' - 1}, {'9' + 1, 0xD7FF}, {0xE000, 0x10FFFF}}},
		{"any minus any", Any, Any, Any, nil},
		{"first and last rune", Any, Set{{0, 0}, {0x10FFFF, 0x10FFFF}}, Set{{0, 0}, {0x10FFFF, 0x10FFFF}},
			Set{{1, 0xD7FF}, {0xE000, 0x10FFFE}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.And(tt.u); !equalSets(got, tt.and) {
				t.Errorf("%v.And(%v) = %v, want %v", tt.s, tt.u, got, tt.and)
			}
			if got := tt.u.And(tt.s); !equalSets(got, tt.and) {
				t.Errorf("%v.And(%v) = %v, want %v", tt.u, tt.s, got, tt.and)
			}
			if got := tt.s.Minus(tt.u); !equalSets(got, tt.diff) {
				t.Errorf("%v.Minus(%v) = %v, want %v", tt.s, tt.u, got, tt.diff)
			}
			meets := len(tt.and) > 0
			if got := tt.s.Meets(tt.u); got != meets {
				t.Errorf("%v.Meets(%v) = %v, want %v", tt.s, tt.u, got, meets)
			}
			if got := tt.u.Meets(tt.s); got != meets {
				t.Errorf("%v.Meets(%v) = %v, want %v", tt.u, tt.s, got, meets)
			}
		})
	}
}

func TestSetHas(t *testing.T) {
	s := Set{{'0', '9'}, {'A', 'F'}, {'é', 'é'}}
	tests := []struct {
		name string
		r    rune
		want bool
	}{
		{"first rune", '0', true},
		{"inside", '5', true},
		{"last rune of a range", '9', true},
		{"between ranges", ':', false},
		{"start of second range", 'A', true},
		{"end of second range", 'F', true},
		{"after second range", 'G', false},
		{"single rune range", 'é', true},
		{"below all", ' ', false},
		{"above all", 'ê', false},
		{"negative", -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.Has(tt.r); got != tt.want {
				t.Errorf("%v.Has(%q) = %v, want %v", s, tt.r, got, tt.want)
			}
		})
	}
	if Any.Has(0xD800) {
		t.Errorf("Any.Has(0xD800) = true: surrogates are not valid runes")
	}
	if (Set{}).Has('a') {
		t.Errorf("the empty set has 'a'")
	}
}

func TestSetSizeNth(t *testing.T) {
	tests := []struct {
		name string
		s    Set
		size int
		nth  map[int]rune
	}{
		{"empty", nil, 0, map[int]rune{0: utf8.RuneError}},
		{"digits", Digits, 10, map[int]rune{0: '0', 9: '9', 10: utf8.RuneError}},
		{"two ranges", Set{{'0', '9'}, {'A', 'F'}}, 16, map[int]rune{9: '9', 10: 'A', 15: 'F', 16: utf8.RuneError}},
		{"single runes", Set{{'a', 'a'}, {'c', 'c'}, {'é', 'é'}}, 3, map[int]rune{0: 'a', 1: 'c', 2: 'é'}},
		{"any", Any, 0x110000 - 0x800, map[int]rune{0: 0, 0xD7FF: 0xD7FF, 0xD800: 0xE000, 0x110000 - 0x801: 0x10FFFF}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.Size(); got != tt.size {
				t.Errorf("%v.Size() = %d, want %d", tt.s, got, tt.size)
			}
			if got := tt.s.Empty(); got != (tt.size == 0) {
				t.Errorf("%v.Empty() = %v, want %v", tt.s, got, tt.size == 0)
			}
			for n, want := range tt.nth {
				if got := tt.s.Nth(n); got != want {
					t.Errorf("%v.Nth(%d) = %U, want %U", tt.s, n, got, want)
				}
			}
		})
	}
}

func TestSetPick(t *testing.T) {
	tests := []struct {
		name string
		s    Set
		want rune
	}{
		{"digit before letters", Set{{'5', '5'}, {'A', 'Z'}}, '5'},
		{"lowest digit", Set{{'3', '7'}}, '3'},
		{"upper case before lower case", Set{{'Q', 'Q'}, {'a', 'z'}}, 'Q'},
		{"letter before punctuation", Set{{'-', '-'}, {'x', 'x'}}, 'x'},
		{"dash before other punctuation", Set{{'!', '/'}}, '-'},
		{"underscore", Set{{'_', '`'}}, '_'},
		{"other graphic ASCII", Set{{'!', '#'}}, '!'},
		{"graphic ASCII before space", Set{{' ', '!'}}, '!'},
		{"graphic ASCII before non-ASCII", Set{{'~', '~'}, {'é', 'é'}}, '~'},
		{"letters of any script are not preferred", Set{{'#', '#'}, {'é', 'é'}}, '#'},
		{"first rune otherwise", Set{{'一', '丁'}}, '一'},
		{"control runes", Set{{0, 5}}, 0},
		{"any", Any, '0'},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.Pick(); got != tt.want {
				t.Errorf("%v.Pick() = %q, want %q", tt.s, got, tt.want)
			}
		})
	}
}

func TestSetString(t *testing.T) {
	tests := []struct {
		name string
		s    Set
		want string
	}{
		{"empty", nil, ""},
		{"range", Set{{'0', '9'}, {'A', 'Z'}}, "0-9A-Z"},
		{"two runes are not a range", Set{{'a', 'b'}}, "ab"},
		{"three runes are", Set{{'a', 'c'}}, "a-c"},
		{"single", Set{{'x', 'x'}}, "x"},
		{"dash", Set{{'-', '-'}}, `\-`},
		{"brackets caret backslash", Runes(`[\]^`), `\[-\^`},
		{"escapes one by one", Runes(`-]`), `\-\]`},
		{"caret alone", Runes(`^`), `\^`},
		{"control runes", Set{{0, 0}, {'\t', '\n'}, {0x7F, 0x7F}}, `\x{0}\x{9}\x{A}\x{7F}`},
		{"control range", Set{{'\n', 0x1F}}, `\x{A}-\x{1F}`},
		{"non-ASCII as is", Set{{'é', 'é'}, {'一', '丁'}}, "é一丁"},
		{"non-ASCII range", Set{{'é', 'ë'}}, "é-ë"},
		{"any", Any, `\x{0}-` + string(rune(0xD7FF)) + string(rune(0xE000)) + "-" + string(rune(0x10FFFF))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.s.String()
			if got != tt.want {
				t.Errorf("%v.String() = %q, want %q", []Range(tt.s), got, tt.want)
			}
			if len(tt.s) == 0 {
				return
			}
			// The class body reads back as the same set.
			n, err := Regexp("[" + got + "]")
			if err != nil {
				t.Fatalf("Regexp([%s]): %v", got, err)
			}
			if back := n.Alphabet(); !equalSets(back, tt.s) {
				t.Errorf("[%s] reads back as %v, want %v", got, []Range(back), []Range(tt.s))
			}
		})
	}
}

// matchCase is a string an NFA must accept or refuse.
type matchCase struct {
	s    string
	want bool
}

func checkMatches(t *testing.T, what string, n *NFA, cases []matchCase) {
	t.Helper()
	for _, c := range cases {
		if got := n.Match(c.s); got != c.want {
			t.Errorf("%s: Match(%q) = %v, want %v", what, c.s, got, c.want)
		}
	}
}

func TestLiteral(t *testing.T) {
	tests := []struct {
		name    string
		lit     string
		matches []matchCase
	}{
		{"empty", "", []matchCase{{"", true}, {"a", false}}},
		{"ascii", "AB-", []matchCase{{"AB-", true}, {"AB", false}, {"AB--", false}, {"ab-", false}, {"", false}}},
		{"multi-byte", "é€𝄞", []matchCase{{"é€𝄞", true}, {"é€", false}, {"e€𝄞", false}}},
		{"regexp metacharacters are literal", "a.b*", []matchCase{{"a.b*", true}, {"axb", false}, {"a.bbb", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := Literal(tt.lit)
			checkMatches(t, fmt.Sprintf("Literal(%q)", tt.lit), n, tt.matches)
			if got := n.Nullable(); got != (tt.lit == "") {
				t.Errorf("Nullable() = %v, want %v", got, tt.lit == "")
			}
			if n.Empty() {
				t.Errorf("Empty() = true")
			}
			if got, ok := n.Shortest(); !ok || got != tt.lit {
				t.Errorf("Shortest() = %q, %v, want %q, true", got, ok, tt.lit)
			}
			if got, want := n.Size(), utf8.RuneCountInString(tt.lit)+1; got != want {
				t.Errorf("Size() = %d, want %d", got, want)
			}
		})
	}
}

func TestRepeat(t *testing.T) {
	mixed := Runes("aé€𝄞") // 1, 2, 3 and 4 bytes
	tests := []struct {
		name     string
		set      Set
		lo, hi   int
		nullable bool
		empty    bool
		matches  []matchCase
	}{
		{"fixed digits", Digits, 3, 3, false, false, []matchCase{
			{"123", true}, {"12", false}, {"1234", false}, {"", false}, {"12a", false}}},
		{"bounded digits", Digits, 2, 3, false, false, []matchCase{
			{"12", true}, {"123", true}, {"1", false}, {"1234", false}}},
		{"unbounded", Digits, 2, -1, false, false, []matchCase{
			{"12", true}, {"1234567890123456789012345", true}, {"1", false}, {"", false}, {"12x", false}}},
		{"lo zero", Digits, 0, 2, true, false, []matchCase{
			{"", true}, {"1", true}, {"12", true}, {"123", false}}},
		{"lo zero unbounded", Digits, 0, -1, true, false, []matchCase{
			{"", true}, {"1", true}, {"0000000000", true}, {"0a", false}}},
		{"a 3-byte rune counts 3", mixed, 3, 3, false, false, []matchCase{
			{"aaa", true}, {"aé", true}, {"éa", true}, {"€", true},
			{"é", false}, {"𝄞", false}, {"aaaa", false}, {"ée", false}, {"€a", false}}},
		{"a 4-byte rune counts 4", mixed, 4, 4, false, false, []matchCase{
			{"𝄞", true}, {"éé", true}, {"a€", true}, {"aaaa", true}, {"€", false}, {"a𝄞", false}}},
		{"multi-byte unbounded", Runes("é"), 3, -1, false, false, []matchCase{
			{"éé", true}, {"ééé", true}, {"é", false}, {"", false}}},
		{"nothing fits the bound", Runes("€"), 1, 2, false, true, []matchCase{{"€", false}, {"", false}}},
		{"lo above hi", Digits, 3, 2, false, true, []matchCase{{"12", false}, {"123", false}}},
		{"empty set", nil, 1, 3, false, true, []matchCase{{"", false}, {"a", false}}},
		{"empty set lo zero", nil, 0, 3, true, false, []matchCase{{"", true}, {"a", false}}},
		{"any", Any, 1, 2, false, false, []matchCase{{"\x00", true}, {"\n", true}, {"é", true}, {"ab", true}, {"abc", false}, {"€", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := Repeat(tt.set, tt.lo, tt.hi)
			checkMatches(t, fmt.Sprintf("Repeat(%v, %d, %d)", tt.set, tt.lo, tt.hi), n, tt.matches)
			if got := n.Nullable(); got != tt.nullable {
				t.Errorf("Nullable() = %v, want %v", got, tt.nullable)
			}
			if got := n.Empty(); got != tt.empty {
				t.Errorf("Empty() = %v, want %v", got, tt.empty)
			}
		})
	}
}

func TestRegexp(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		matches []matchCase
	}{
		{"alternation", `a|bc|`, []matchCase{{"a", true}, {"bc", true}, {"", true}, {"b", false}, {"abc", false}, {"c", false}}},
		{"counted repetition counts runes", `é{2}`, []matchCase{{"éé", true}, {"é", false}, {"ééé", false}}},
		{"counted range", `[0-9]{2,3}`, []matchCase{{"12", true}, {"123", true}, {"1", false}, {"1234", false}}},
		{"at least", `x{2,}`, []matchCase{{"xx", true}, {"xxxxxxxx", true}, {"x", false}}},
		{"class", `[A-C0-2_]+`, []matchCase{{"A0_", true}, {"CCC", true}, {"D", false}, {"3", false}, {"", false}}},
		{"negated class takes newline", `[^0-9]`, []matchCase{{"a", true}, {"é", true}, {"\n", true}, {"5", false}}},
		{"perl class is ASCII", `\d\w`, []matchCase{{"1a", true}, {"1_", true}, {"١a", false}, {"1é", false}}},
		{"unicode class", `\pL+`, []matchCase{{"éa", true}, {"一", true}, {"1", false}}},
		{"fold case", `(?i)ab`, []matchCase{{"ab", true}, {"AB", true}, {"aB", true}, {"ac", false}}},
		{"fold case of one rune", `(?i)k`, []matchCase{{"k", true}, {"K", true}, {"\u212A", true}, {"j", false}}},
		{"fold case in a class", `(?i)[a-c]x`, []matchCase{{"Bx", true}, {"bX", true}, {"dx", false}}},
		{"fold case off", `(?i)a(?-i)b`, []matchCase{{"Ab", true}, {"AB", false}}},
		{"dot", `a.b`, []matchCase{{"axb", true}, {"aéb", true}, {"a\nb", false}, {"ab", false}}},
		{"dot with s", `a(?s:.)b`, []matchCase{{"axb", true}, {"a\nb", true}, {"ab", false}}},
		{"empty", ``, []matchCase{{"", true}, {"a", false}}},
		{"capture groups are plain groups", `(a)(?P<x>b)`, []matchCase{{"ab", true}, {"a", false}}},
		{"star", `(ab)*`, []matchCase{{"", true}, {"ab", true}, {"abab", true}, {"aba", false}}},
		{"escape", `\.\*`, []matchCase{{".*", true}, {"a*", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Regexp(tt.pattern)
			if err != nil {
				t.Fatalf("Regexp(%q): %v", tt.pattern, err)
			}
			checkMatches(t, fmt.Sprintf("Regexp(%q)", tt.pattern), n, tt.matches)
			// Go's regexp agrees on every case.
			re := regexp.MustCompile(`^(?:` + tt.pattern + `)$`)
			for _, c := range tt.matches {
				if got := re.MatchString(c.s); got != c.want {
					t.Errorf("test case is wrong: regexp %q matches %q: %v", re, c.s, got)
				}
			}
		})
	}
}

func TestRegexpErrors(t *testing.T) {
	const anchors = "anchors and word boundaries are not allowed in a part's pattern"
	tests := []struct {
		name    string
		pattern string
		want    string
	}{
		{"caret", `^a`, `lang: pattern "^a": ` + anchors},
		{"dollar", `a$`, `lang: pattern "a$": ` + anchors},
		{"word boundary", `\ba`, `lang: pattern "\\ba": ` + anchors},
		{"not a word boundary", `a\B`, `lang: pattern "a\\B": ` + anchors},
		{"begin text", `\Aa`, `lang: pattern "\\Aa": ` + anchors},
		{"multi-line caret", `(?m)a|^b`, `lang: pattern "(?m)a|^b": ` + anchors},
		{"anchor after a rune", `ab$|c`, `lang: pattern "ab$|c": ` + anchors},
		{"syntax", `a(`, "lang: pattern \"a(\": error parsing regexp: missing closing ): `a(`"},
		{"bad class", `[z-a]`, "lang: pattern \"[z-a]\": error parsing regexp: invalid character class range: `z-a`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Regexp(tt.pattern)
			if err == nil {
				t.Fatalf("Regexp(%q) = %v, want an error", tt.pattern, n)
			}
			if !errors.Is(err, ErrPattern) {
				t.Errorf("error %v does not wrap ErrPattern", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q, want %q", err, tt.want)
			}
		})
	}
}

func TestRegexpEmptyLanguage(t *testing.T) {
	tests := []struct {
		name     string
		pattern  string
		alphabet Set
	}{
		{"no rune", `[^\x00-\x{10FFFF}]`, nil},
		{"dead branch trimmed", `a[^\x00-\x{10FFFF}]|b`, Set{{'b', 'b'}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Regexp(tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if got := n.Empty(); got != (len(tt.alphabet) == 0) {
				t.Errorf("Empty() = %v", got)
			}
			if got := n.Alphabet(); !equalSets(got, tt.alphabet) {
				t.Errorf("Alphabet() = %v, want %v", got, tt.alphabet)
			}
		})
	}
}

func TestScan(t *testing.T) {
	alt, _ := Regexp(`a|ab|abc`)
	digits := Repeat(Digits, 0, -1)
	anyStar, _ := Regexp(`(?s:.)*`)
	tests := []struct {
		name    string
		n       *NFA
		s       string
		pos     int
		stop    int // end returns false at the stop-th end (1-based); 0 never
		ends    []int
		reached int
	}{
		{"every end in order", alt, "abcd", 0, 0, []int{1, 2, 3}, 3},
		{"stops when end says so", alt, "abcd", 0, 1, []int{1}, 1},
		{"stops at the second", alt, "abcd", 0, 2, []int{1, 2}, 2},
		{"from a position", Literal("ab"), "xxab", 2, 0, []int{4}, 4},
		{"no match: where it stops fitting", Literal("abc"), "abx", 0, 0, nil, 2},
		{"no match at the first rune", Literal("abc"), "xbc", 0, 0, nil, 0},
		{"input too short", Literal("abc"), "ab", 0, 0, nil, 2},
		{"nullable", digits, "12a", 0, 0, []int{0, 1, 2}, 2},
		{"nullable at the end of the input", digits, "12", 2, 0, []int{2}, 2},
		{"empty literal", Literal(""), "abc", 1, 0, []int{1}, 1},
		{"multi-byte positions are bytes", Repeat(Runes("é"), 2, 4), "éééx", 0, 0, []int{2, 4}, 4},
		{"invalid UTF-8 stops", anyStar, "a\xffb", 0, 0, []int{0, 1}, 1},
		{"past the last match", Literal("ab"), "abab", 0, 0, []int{2}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ends []int
			reached := tt.n.Scan(tt.s, tt.pos, func(e int) bool {
				ends = append(ends, e)
				return len(ends) != tt.stop
			})
			if !slices.Equal(ends, tt.ends) {
				t.Errorf("Scan(%q, %d) ends = %v, want %v", tt.s, tt.pos, ends, tt.ends)
			}
			if reached != tt.reached {
				t.Errorf("Scan(%q, %d) = %d, want %d", tt.s, tt.pos, reached, tt.reached)
			}
		})
	}
}

func TestShortest(t *testing.T) {
	mustRE := func(p string) *NFA {
		n, err := Regexp(p)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	tests := []struct {
		name string
		n    *NFA
		want string
		ok   bool
	}{
		{"literal", Literal("AB"), "AB", true},
		{"empty string", Literal(""), "", true},
		{"shortest branch", mustRE(`[a-z]{3}|[0-9]{5}`), "aaa", true},
		{"readable rune", mustRE(`[%-]{2}`), "--", true},
		{"digit before letter", mustRE(`[a-z0-9]x`), "0x", true},
		{"non-ASCII", mustRE(`\x{4E00}`), "一", true},
		{"counted in runes, not bytes", Repeat(Runes("a€"), 3, 3), "a€"[1:], true}, // € (3 bytes) beats aaa: 1 rune
		{"none", mustRE(`[^\x00-\x{10FFFF}]`), "", false},
		{"none: bound unreachable", Repeat(Runes("€"), 1, 2), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.n.Shortest()
			if got != tt.want || ok != tt.ok {
				t.Errorf("Shortest() = %q, %v, want %q, %v", got, ok, tt.want, tt.ok)
			}
			if ok && !tt.n.Match(got) {
				t.Errorf("Shortest() = %q, which does not match", got)
			}
		})
	}
}

func TestAlphabet(t *testing.T) {
	mustRE := func(p string) *NFA {
		n, err := Regexp(p)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	tests := []struct {
		name string
		n    *NFA
		want Set
	}{
		{"literal", Literal("abca"), Set{{'a', 'c'}}},
		{"empty literal", Literal(""), nil},
		{"regexp", mustRE(`a[0-2]|é`), Set{{'0', '2'}, {'a', 'a'}, {'é', 'é'}}},
		{"runes that cannot fit are left out", Repeat(Runes("é€"), 2, 2), Set{{'é', 'é'}}},
		{"repeat", Repeat(Digits, 1, -1), Digits},
		{"dot", mustRE(`.`), Any.Minus(Set{{'\n', '\n'}})},
		{"fold case", mustRE(`(?i)s`), Set{{'S', 'S'}, {'s', 's'}, {0x17F, 0x17F}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.n.Alphabet(); !equalSets(got, tt.want) {
				t.Errorf("Alphabet() = %v, want %v", []Range(got), []Range(tt.want))
			}
		})
	}
}

// checkWitness checks that w is a string both chains read, as its splits
// say, and that the splits differ in a marked link (or the chains
// diverged).
func checkWitness(t *testing.T, a, b Chain, w Witness, diverged bool) {
	t.Helper()
	runes := []rune(w.Text)
	if len(runes) != len(w.Labels) {
		t.Fatalf("witness %q has %d runes and %d labels", w.Text, len(runes), len(w.Labels))
	}
	for i, r := range runes {
		if !w.Labels[i].Has(r) {
			t.Errorf("witness %q: rune %d %q is not in its label %v", w.Text, i, r, w.Labels[i])
		}
	}
	for _, side := range []struct {
		name  string
		chain Chain
		split Split
	}{{"A", a, w.A}, {"B", b, w.B}} {
		if len(side.split) != len(side.chain) {
			t.Fatalf("witness %q: split %s has %d spans for %d links", w.Text, side.name, len(side.split), len(side.chain))
		}
		at := 0
		for i, sp := range side.split {
			if sp[0] != at || sp[1] < sp[0] {
				t.Fatalf("witness %q: split %s %v does not tile the text at link %d", w.Text, side.name, side.split, i)
			}
			at = sp[1]
			text := string(runes[sp[0]:sp[1]])
			if !side.chain[i].NFA.Match(text) {
				t.Errorf("witness %q: split %s gives link %d %q, outside its language", w.Text, side.name, i, text)
			}
			// Every rune of the label is fine too.
			for p := sp[0]; p < sp[1]; p++ {
				alt := slices.Clone(runes)
				alt[p] = w.Labels[p].Nth(w.Labels[p].Size() - 1)
				if !side.chain[i].NFA.Match(string(alt[sp[0]:sp[1]])) {
					t.Errorf("witness %q: split %s: link %d refuses %q, though its label allows it", w.Text, side.name, i, string(alt[sp[0]:sp[1]]))
				}
			}
		}
		if at != len(runes) {
			t.Fatalf("witness %q: split %s %v ends at %d of %d", w.Text, side.name, side.split, at, len(runes))
		}
	}
	if !diverged && slices.Equal(markedSpans(a, w.A), markedSpans(b, w.B)) {
		t.Errorf("witness %q: splits %v and %v give the marked links the same spans", w.Text, w.A, w.B)
	}
}

// markedSpans lists the spans of the marked links of a split.
func markedSpans(c Chain, sp Split) [][2]int {
	var out [][2]int
	for i, l := range c {
		if l.Marked {
			out = append(out, sp[i])
		}
	}
	return out
}

func mustRegexp(t *testing.T, p string) *NFA {
	t.Helper()
	n, err := Regexp(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAmbiguous(t *testing.T) {
	seq := mustRegexp(t, `[1-9][0-9]*`)
	any1 := Repeat(Any, 1, -1)
	digits := Repeat(Digits, 1, -1)
	tests := []struct {
		name     string
		a, b     Chain
		diverged bool
		want     string // the shortest witness's text, "" for none
		wantA    Split
		wantB    Split
	}{
		{
			name: "literal then fixed width",
			a:    Chain{{Literal("A"), false}, {Repeat(Digits, 3, 3), true}},
		},
		{
			name: "anything then a sequence",
			a:    Chain{{any1, false}, {seq, true}},
			want: "011", wantA: Split{{0, 1}, {1, 3}}, wantB: Split{{0, 2}, {2, 3}},
		},
		{
			name: "ambiguity in unmarked links only",
			a:    Chain{{digits, false}, {digits, false}, {Literal("-"), false}, {Repeat(Digits, 3, 3), true}},
		},
		{
			name: "unmarked links around a fixed marked one",
			a:    Chain{{digits, false}, {Literal("-"), false}, {Repeat(Digits, 2, 2), true}, {Literal("-"), false}, {any1, false}},
		},
		{
			name: "two marked links adjacent",
			a:    Chain{{Repeat(Digits, 1, 2), true}, {Repeat(Digits, 1, 2), true}},
			want: "000", wantA: Split{{0, 1}, {1, 3}}, wantB: Split{{0, 2}, {2, 3}},
		},
		{
			name: "marked link then nullable unmarked one",
			a:    Chain{{digits, true}, {Repeat(Digits, 0, 1), false}},
			want: "00", wantA: Split{{0, 1}, {1, 2}}, wantB: Split{{0, 2}, {2, 2}},
		},
		{
			name: "separator the variable cannot print",
			a:    Chain{{Repeat(Any.Minus(Runes("-")), 1, -1), true}, {Literal("-"), false}, {seq, true}},
		},
		{
			name: "separator the sequence cannot print",
			a:    Chain{{any1, true}, {Literal("-"), false}, {seq, true}},
		},
		{
			name: "separator both variables can print",
			a:    Chain{{any1, true}, {Literal("-"), false}, {any1, true}},
			want: "0--0", wantA: Split{{0, 1}, {1, 2}, {2, 4}}, wantB: Split{{0, 2}, {2, 3}, {3, 4}},
		},
		{
			name: "two chains that never meet",
			a:    Chain{{Literal("A"), false}, {digits, true}},
			b:    Chain{{Literal("B"), false}, {digits, true}},
		},
		{
			name: "two chains read alike",
			a:    Chain{{Literal("A"), false}, {Repeat(Digits, 1, 3), true}},
			b:    Chain{{Repeat(Runes("AB"), 1, 1), false}, {Repeat(Digits, 2, 2), true}},
		},
		{
			name:     "two chains diverged",
			a:        Chain{{Literal("A"), false}, {Repeat(Digits, 1, 3), true}},
			b:        Chain{{Repeat(Runes("AB"), 1, 1), false}, {Repeat(Digits, 2, 2), true}},
			diverged: true,
			want:     "A00", wantA: Split{{0, 1}, {1, 3}}, wantB: Split{{0, 1}, {1, 3}},
		},
		{
			name: "two chains read differently",
			a:    Chain{{Literal("A"), false}, {Repeat(Digits, 1, 3), true}},
			b:    Chain{{Repeat(Runes("A0"), 2, 2), false}, {Repeat(Digits, 1, 1), true}},
			want: "A00", wantA: Split{{0, 1}, {1, 3}}, wantB: Split{{0, 2}, {2, 3}},
		},
		{
			name:     "diverged chains that never meet",
			a:        Chain{{Literal("QJ"), false}, {Repeat(Digits, 6, 6), true}},
			b:        Chain{{Literal("QJ"), false}, {Repeat(Digits, 8, 8), true}},
			diverged: true,
		},
		{
			name:     "diverged chains that accept the empty string",
			a:        Chain{{Repeat(Digits, 0, 2), false}},
			b:        Chain{{Literal(""), false}},
			diverged: true,
			want:     "", wantA: Split{{0, 0}}, wantB: Split{{0, 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.b
			if b == nil {
				b = tt.a
			}
			ws, err := Ambiguous(tt.a, b, tt.diverged, 1, 1, 1_000_000)
			if err != nil {
				t.Fatalf("Ambiguous: %v", err)
			}
			wantNone := tt.wantA == nil
			if wantNone {
				if len(ws) != 0 {
					t.Fatalf("Ambiguous = %+v, want no witness", ws)
				}
				return
			}
			if len(ws) != 1 {
				t.Fatalf("Ambiguous = %+v, want 1 witness", ws)
			}
			w := ws[0]
			checkWitness(t, tt.a, b, w, tt.diverged)
			if w.Text != tt.want {
				t.Errorf("witness %q, want %q", w.Text, tt.want)
			}
			// Which run is A is the search's choice.
			same := slices.Equal(w.A, tt.wantA) && slices.Equal(w.B, tt.wantB)
			swapped := tt.b == nil && slices.Equal(w.A, tt.wantB) && slices.Equal(w.B, tt.wantA)
			if !same && !swapped {
				t.Errorf("splits %v and %v, want %v and %v", w.A, w.B, tt.wantA, tt.wantB)
			}
		})
	}
}

func TestAmbiguousVisits(t *testing.T) {
	// Three readings of "0000" give the marked middle link different
	// spans: (2,1,1), (1,2,1) and (1,1,2). One visit per pair of states
	// keeps the first path into each; more visits keep other splits.
	d := Repeat(Digits, 1, -1)
	c := Chain{{d, false}, {d, true}, {d, false}}
	pairs := func(visits int) map[string]bool {
		ws, err := Ambiguous(c, c, false, 64, visits, 1_000_000)
		if err != nil {
			t.Fatalf("visits=%d: %v", visits, err)
		}
		seen := map[string]bool{}
		for i, w := range ws {
			checkWitness(t, c, c, w, false)
			if i > 0 && len(w.Labels) < len(ws[i-1].Labels) {
				t.Errorf("visits=%d: witness %d %q is shorter than the one before, %q", visits, i, w.Text, ws[i-1].Text)
			}
			id := fmt.Sprint(w.A, w.B)
			if seen[id] {
				t.Errorf("visits=%d: splits %s twice", visits, id)
			}
			seen[id] = true
		}
		// The unordered pairs of splits of the shortest witness, "0000".
		short := map[string]bool{}
		for _, w := range ws {
			if w.Text == "0000" {
				x, y := fmt.Sprint(w.A), fmt.Sprint(w.B)
				short[min(x, y)+" "+max(x, y)] = true
			}
		}
		return short
	}
	one, two := pairs(1), pairs(2)
	if len(one) != 2 {
		t.Errorf("visits=1: %d pairs of splits of 0000 (%v), want 2", len(one), one)
	}
	if len(two) != 3 {
		t.Errorf("visits=2: %d pairs of splits of 0000 (%v), want all 3", len(two), two)
	}
	for p := range one {
		if !two[p] {
			t.Errorf("visits=2 lost the pair %s", p)
		}
	}
}

func TestAmbiguousMax(t *testing.T) {
	seq := mustRegexp(t, `[1-9][0-9]*`)
	c := Chain{{Repeat(Any, 1, -1), false}, {seq, true}}
	for _, max := range []int{1, 2, 3} {
		ws, err := Ambiguous(c, c, false, max, 1, 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		if len(ws) != max {
			t.Errorf("max=%d: %d witnesses", max, len(ws))
		}
		for _, w := range ws {
			checkWitness(t, c, c, w, false)
		}
	}
}

func TestAmbiguousLimit(t *testing.T) {
	seq := mustRegexp(t, `[1-9][0-9]*`)
	fixed := Chain{{Literal("A"), false}, {Repeat(Digits, 3, 3), true}}
	anySeq := Chain{{Repeat(Any, 1, -1), false}, {seq, true}}
	d := Repeat(Digits, 1, -1)
	three := Chain{{d, false}, {d, true}, {d, false}} // 4 witnesses, 31 pairs of states
	tests := []struct {
		name      string
		c         Chain
		max       int
		limit     int
		witnesses int
		err       error
	}{
		{"unambiguous within the limit", fixed, 1, 100, 0, nil},
		{"unambiguous beyond the limit", fixed, 1, 2, 0, ErrTooComplex},
		{"ambiguous beyond the limit", anySeq, 1, 1, 0, ErrTooComplex},
		{"ambiguous within the limit", anySeq, 1, 100, 1, nil},
		{"all witnesses within the limit", three, 64, 31, 4, nil},
		{"witnesses found before the limit", three, 64, 30, 1, ErrTooComplex},
		{"the search stops at max witnesses before the limit", three, 1, 30, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := Ambiguous(tt.c, tt.c, false, tt.max, 1, tt.limit)
			if err != tt.err {
				t.Errorf("error = %v, want %v", err, tt.err)
			}
			if err != nil && err.Error() != "lang: too many states to check" {
				t.Errorf("error message %q", err)
			}
			if len(ws) != tt.witnesses {
				t.Errorf("%d witnesses, want %d", len(ws), tt.witnesses)
			}
			for _, w := range ws {
				checkWitness(t, tt.c, tt.c, w, false)
			}
		})
	}
}

// TestAmbiguousNullableChain runs the search on chains that accept the
// empty string: the pair of start states where one run has already ended
// must be skipped as it is after a read.
func TestAmbiguousNullableChain(t *testing.T) {
	opt := Repeat(Digits, 0, 2)
	tests := []struct {
		name     string
		a, b     Chain
		diverged bool
		want     int // witnesses
	}{
		{"one nullable link", Chain{{opt, false}}, nil, false, 0},
		{"two nullable links", Chain{{opt, false}, {opt, false}}, nil, false, 0},
		{"nullable against not", Chain{{opt, false}}, Chain{{Literal("1"), false}, {Repeat(Digits, 1, 1), true}}, false, 1},
		{"diverged", Chain{{opt, false}}, Chain{{Literal(""), false}}, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.b
			if b == nil {
				b = tt.a
			}
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Ambiguous panicked: %v", r)
				}
			}()
			ws, err := Ambiguous(tt.a, b, tt.diverged, 1, 1, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if len(ws) != tt.want {
				t.Fatalf("%d witnesses (%+v), want %d", len(ws), ws, tt.want)
			}
			for _, w := range ws {
				checkWitness(t, tt.a, b, w, tt.diverged)
			}
		})
	}
}

// linkSpec is a random link of the property test: a literal or a
// repetition, with the Go regexp that says the same.
type linkSpec struct {
	lit    *string
	set    string
	lo, hi int
	marked bool
}

func (l linkSpec) String() string {
	m := ""
	if l.marked {
		m = "*"
	}
	if l.lit != nil {
		return fmt.Sprintf("%q%s", *l.lit, m)
	}
	return fmt.Sprintf("[%s]{%d,%d}%s", l.set, l.lo, l.hi, m)
}

func (l linkSpec) link() Link {
	if l.lit != nil {
		return Link{Literal(*l.lit), l.marked}
	}
	return Link{Repeat(Runes(l.set), l.lo, l.hi), l.marked}
}

func (l linkSpec) regexp() *regexp.Regexp {
	if l.lit != nil {
		return regexp.MustCompile(`^` + regexp.QuoteMeta(*l.lit) + `$`)
	}
	class := "["
	for _, r := range l.set {
		if r == '-' {
			class += `\`
		}
		class += string(r)
	}
	class += "]"
	if l.hi < 0 {
		return regexp.MustCompile(fmt.Sprintf(`^%s{%d,}$`, class, l.lo))
	}
	return regexp.MustCompile(fmt.Sprintf(`^%s{%d,%d}$`, class, l.lo, l.hi))
}

const (
	bruteAlphabet = "01A-"
	bruteLen      = 6
)

// randomChain returns one to four random links over bruteAlphabet, one
// marked at least (a template always has a sequence).
func randomChain(rng *rand.Rand) []linkSpec {
	n := 1 + rng.IntN(4)
	specs := make([]linkSpec, n)
	hasMark := false
	for i := range specs {
		l := &specs[i]
		l.marked = rng.IntN(2) == 0 || i == n-1 && !hasMark
		hasMark = hasMark || l.marked
		if rng.IntN(3) == 0 {
			lit := ""
			for k := rng.IntN(3); k > 0 || l.marked && lit == ""; k-- {
				lit += string("0A-"[rng.IntN(3)])
			}
			l.lit = &lit
			continue
		}
		for l.set == "" {
			for _, r := range bruteAlphabet {
				if rng.IntN(2) == 0 {
					l.set += string(r)
				}
			}
		}
		l.lo = rng.IntN(3)
		if l.marked && l.lo == 0 {
			l.lo = 1
		}
		if rng.IntN(3) == 0 {
			l.hi = -1
		} else {
			l.hi = l.lo + rng.IntN(3)
		}
	}
	return specs
}

// strings returns the strings the link reads, up to bruteLen long,
// shortest first, by construction.
func (l linkSpec) strings() []string {
	if l.lit != nil {
		if len(*l.lit) > bruteLen {
			return nil
		}
		return []string{*l.lit}
	}
	hi := l.hi
	if hi < 0 || hi > bruteLen {
		hi = bruteLen
	}
	var out []string
	level := []string{""}
	for n := 0; n <= hi; n++ {
		if n >= l.lo {
			out = append(out, level...)
		}
		var next []string
		for _, s := range level {
			for _, r := range l.set {
				next = append(next, s+string(r))
			}
		}
		level = next
	}
	return out
}

// readings maps every string up to bruteLen that the chain accepts to (up
// to two) distinct lists of its marked links' spans, by brute force: every
// concatenation of the links' strings.
func readings(specs []linkSpec) map[string][]string {
	langs := make([][]string, len(specs))
	for i, l := range specs {
		langs[i] = l.strings()
	}
	out := map[string][]string{}
	var walk func(i int, prefix string, sig []byte)
	walk = func(i int, prefix string, sig []byte) {
		if i == len(specs) {
			got := out[prefix]
			if len(got) < 2 && (len(got) == 0 || got[0] != string(sig)) {
				out[prefix] = append(got, string(sig))
			}
			return
		}
		for _, s := range langs[i] {
			if len(prefix)+len(s) > bruteLen {
				break // shortest first
			}
			sg := sig
			if specs[i].marked {
				sg = append(sg[:len(sg):len(sg)], byte('0'+len(prefix)), byte('0'+len(prefix)+len(s)))
			}
			walk(i+1, prefix+s, sg)
		}
	}
	walk(0, "", nil)
	return out
}

// bruteShortest returns the length of the shortest string of at most
// bruteLen that a and b both accept with readings that differ in their
// marked links (any readings, when diverged), or -1.
func bruteShortest(ra, rb map[string][]string, diverged bool) int {
	best := -1
	for s, sa := range ra {
		sb, ok := rb[s]
		if !ok || best >= 0 && len(s) >= best {
			continue
		}
		if diverged || len(sa) > 1 || len(sb) > 1 || sa[0] != sb[0] {
			best = len(s)
		}
	}
	return best
}

func chainOf(specs []linkSpec) Chain {
	c := make(Chain, len(specs))
	for i, l := range specs {
		c[i] = l.link()
	}
	return c
}

// checkWitnessBrute checks a witness's splits against the links' Go
// regexps, independently of the NFAs.
func checkWitnessBrute(t *testing.T, specs []linkSpec, w Witness, sp Split) {
	t.Helper()
	runes := []rune(w.Text)
	for i, l := range specs {
		part := string(runes[sp[i][0]:sp[i][1]])
		if !l.regexp().MatchString(part) {
			t.Errorf("witness %q: link %d %v reads %q, which its regexp refuses", w.Text, i, l, part)
		}
	}
}

// TestAmbiguousBruteForce proves the product construction on small cases:
// for random chains, a witness is reported exactly when some string has
// two readings that give a marked link different spans, and the witness is
// as short as the shortest such string. The brute force enumerates every
// string up to bruteLen over bruteAlphabet and every way to read it, with
// Go's regexp; a case is compared in full only when the search's answer
// lies within that bound.
func TestAmbiguousBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const cases = 3000
	compared, ambiguous := 0, 0
	for n := 0; n < cases; n++ {
		specs := randomChain(rng)
		c := chainOf(specs)
		r := readings(specs)
		want := bruteShortest(r, r, false)
		ws, err := Ambiguous(c, c, false, 1, 1, 1_000_000)
		if err != nil {
			t.Fatalf("%v: %v", specs, err)
		}
		got := -1
		if len(ws) > 0 {
			got = len(ws[0].Labels)
			checkWitness(t, c, c, ws[0], false)
			checkWitnessBrute(t, specs, ws[0], ws[0].A)
			checkWitnessBrute(t, specs, ws[0], ws[0].B)
		}
		if got > bruteLen {
			if want >= 0 {
				t.Errorf("%v: shortest witness %q is %d long; brute force found one %d long", specs, ws[0].Text, got, want)
			}
			continue
		}
		compared++
		if got >= 0 {
			ambiguous++
		}
		if got != want {
			w := "none"
			if len(ws) > 0 {
				w = fmt.Sprintf("%q %v %v", ws[0].Text, ws[0].A, ws[0].B)
			}
			t.Errorf("%v: Ambiguous gives %s (length %d); brute force: shortest %d", specs, w, got, want)
		}
	}
	// The random chains must exercise both answers.
	if compared < cases*9/10 || ambiguous < compared/8 || ambiguous > compared*7/8 {
		t.Errorf("%d of %d cases compared, %d of them ambiguous: the generator needs tuning", compared, cases, ambiguous)
	}
	t.Logf("%d of %d cases compared, %d ambiguous", compared, cases, ambiguous)
}

// TestAmbiguousBruteForceTwoChains does the same for two different
// chains: diverged, any common string is a witness; otherwise one whose
// readings give the marked links different spans.
func TestAmbiguousBruteForceTwoChains(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	const cases = 2000
	compared, ambiguous := 0, 0
	for n := 0; n < cases; n++ {
		sa, sb := randomChain(rng), randomChain(rng)
		diverged := n%2 == 0
		a, b := chainOf(sa), chainOf(sb)
		want := bruteShortest(readings(sa), readings(sb), diverged)
		ws, err := Ambiguous(a, b, diverged, 1, 1, 1_000_000)
		if err != nil {
			t.Fatalf("%v %v: %v", sa, sb, err)
		}
		got := -1
		if len(ws) > 0 {
			got = len(ws[0].Labels)
			checkWitness(t, a, b, ws[0], diverged)
			checkWitnessBrute(t, sa, ws[0], ws[0].A)
			checkWitnessBrute(t, sb, ws[0], ws[0].B)
		}
		if got > bruteLen {
			if want >= 0 {
				t.Errorf("%v %v diverged=%v: shortest witness %q is %d long; brute force found one %d long", sa, sb, diverged, ws[0].Text, got, want)
			}
			continue
		}
		compared++
		if got >= 0 {
			ambiguous++
		}
		if got != want {
			t.Errorf("%v %v diverged=%v: Ambiguous gives length %d; brute force: %d", sa, sb, diverged, got, want)
		}
	}
	if compared < cases*9/10 || ambiguous < compared/10 || ambiguous > compared*9/10 {
		t.Errorf("%d of %d cases compared, %d of them ambiguous: the generator needs tuning", compared, cases, ambiguous)
	}
	t.Logf("%d of %d cases compared, %d ambiguous", compared, cases, ambiguous)
}

// TestAmbiguousManyWitnesses checks every witness of a wider search on
// random chains: each reads as its splits say, splits differently in a
// marked link, and none comes before a shorter one.
func TestAmbiguousManyWitnesses(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	for n := 0; n < 300; n++ {
		specs := randomChain(rng)
		c := chainOf(specs)
		ws, err := Ambiguous(c, c, false, 64, 3, 1_000_000)
		if err != nil {
			t.Fatalf("%v: %v", specs, err)
		}
		seen := map[string]bool{}
		for i, w := range ws {
			checkWitness(t, c, c, w, false)
			checkWitnessBrute(t, specs, w, w.A)
			checkWitnessBrute(t, specs, w, w.B)
			if i > 0 && len(w.Labels) < len(ws[i-1].Labels) {
				t.Errorf("%v: witness %d %q after the longer %q", specs, i, w.Text, ws[i-1].Text)
			}
			id := fmt.Sprint(w.A, w.B)
			if seen[id] {
				t.Errorf("%v: splits %s reported twice", specs, id)
			}
			seen[id] = true
		}
	}
}

func TestNonZeroAndUnion(t *testing.T) {
	three := NonZero(3)
	for s, want := range map[string]bool{"001": true, "100": true, "999": true, "000": false, "01": false, "0001": false, "": false} {
		if got := three.Match(s); got != want {
			t.Errorf("NonZero(3).Match(%q) = %v, want %v", s, got, want)
		}
	}
	wide, err := Regexp(`[1-9][0-9]{3,18}`)
	if err != nil {
		t.Fatal(err)
	}
	grow := Union(three, wide)
	for s, want := range map[string]bool{"001": true, "1000": true, "0100": false, "000": false, "12345678901234567890": false} {
		if got := grow.Match(s); got != want {
			t.Errorf("Union.Match(%q) = %v, want %v", s, got, want)
		}
	}
	if got, _ := grow.Shortest(); len(got) != 3 {
		t.Errorf("Union.Shortest() = %q", got)
	}
}

// Reach says, for every link and position, whether the rest of the chain
// reads the rest of the string; checked against every way the links split
// every string up to bruteLen.
func TestReachBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var all []string
	level := []string{""}
	for n := 0; n <= bruteLen; n++ {
		all = append(all, level...)
		var next []string
		for _, s := range level {
			for _, r := range bruteAlphabet {
				next = append(next, s+string(r))
			}
		}
		level = next
	}
	for k := 0; k < 300; k++ {
		specs := randomChain(rng)
		c := chainOf(specs)
		langs := make([][]string, len(specs))
		for i, l := range specs {
			langs[i] = l.strings()
		}
		for _, s := range all[rng.IntN(len(all)/2):][:200] {
			// live[i][pos] by brute force: links i.. read s[pos:].
			var live func(i, pos int) bool
			live = func(i, pos int) bool {
				if i == len(specs) {
					return pos == len(s)
				}
				for _, w := range langs[i] {
					if pos+len(w) <= len(s) && s[pos:pos+len(w)] == w && live(i+1, pos+len(w)) {
						return true
					}
				}
				return false
			}
			r := c.Reach(s)
			for i := 0; i <= len(specs); i++ {
				for pos := 0; pos <= len(s); pos++ {
					if got, want := r.Live(i, pos), live(i, pos); got != want {
						t.Fatalf("chain %v, %q: Live(%d, %d) = %v, want %v", specs, s, i, pos, got, want)
					}
				}
			}
			// Furthest: when the chain reads all of s, it got there.
			if link, pos := c.Furthest(s); live(0, 0) && (link != len(specs) || pos != len(s)) {
				t.Fatalf("chain %v, %q: Furthest = %d, %d for a string it reads", specs, s, link, pos)
			}
		}
	}
}

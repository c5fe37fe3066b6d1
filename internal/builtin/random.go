package builtin

import (
	"crypto/rand"
	"sort"
	"strconv"
	"strings"

	"github.com/sngen/sn/expression"
)

// Random is the part "@<random, width=N, alphabet=CHARS>": N characters
// drawn with crypto/rand from the alphabet (default "0-9"; ranges such as
// "A-Z" expand). It makes numbers harder to guess; it is never what makes
// them unique — the sequence is.
type Random struct {
	Width    int
	Alphabet string
}

// NewRandom is the [Factory] of the random part.
func NewRandom(args expression.Args) (expression.Expression, error) {
	if err := args.Check("width", "alphabet"); err != nil {
		return nil, err
	}
	if _, ok := args["width"]; !ok {
		return nil, expression.Errorf("", "random needs width=N")
	}
	w, err := args.Int("width", 0, 1, 64)
	if err != nil {
		return nil, err
	}
	spec := "0-9"
	if a, ok := args["alphabet"]; ok {
		spec = a
	}
	alpha, ok := ExpandAlphabet(spec)
	if !ok {
		return nil, expression.Errorf("alphabet", "alphabet=%q: want 2 to 256 distinct ASCII characters, ranges such as A-Z allowed", spec)
	}
	return &Random{Width: w, Alphabet: alpha}, nil
}

// ExpandAlphabet expands an alphabet= argument: ranges such as "0-9A-F"
// (a '-' at either end is literal), printable ASCII only, each character
// once, at least two. ok is false for a spec that breaks a rule.
func ExpandAlphabet(spec string) (alphabet string, ok bool) {
	var b []byte
	seen := [256]bool{}
	add := func(c byte) bool {
		if c < 0x21 || c > 0x7e || seen[c] {
			return false
		}
		seen[c] = true
		b = append(b, c)
		return true
	}
	for i := 0; i < len(spec); i++ {
		if i+2 < len(spec) && spec[i+1] == '-' {
			lo, hi := spec[i], spec[i+2]
			if lo > hi {
				return "", false
			}
			for c := lo; ; c++ {
				if !add(c) {
					return "", false
				}
				if c == hi {
					break
				}
			}
			i += 2
			continue
		}
		if !add(spec[i]) {
			return "", false
		}
	}
	return string(b), len(b) >= 2
}

// Append appends Width random characters.
func (r *Random) Append(dst []byte, _ *expression.Context) ([]byte, error) {
	n := len(r.Alphabet)
	limit := 256 - 256%n // reject bytes at or above limit: no modulo bias
	var buf [64]byte
	for need := r.Width; need > 0; {
		rand.Read(buf[:need])
		for _, x := range buf[:need] {
			if int(x) < limit && need > 0 {
				dst = append(dst, r.Alphabet[int(x)%n])
				need--
			}
		}
	}
	return dst, nil
}

// Order returns Normal.
func (*Random) Order() expression.Order { return expression.Normal }

// MaxLen returns Width.
func (r *Random) MaxLen() int { return r.Width }

// Pattern matches Width characters of the alphabet.
func (r *Random) Pattern() string {
	return "[" + alphabetClass(r.Alphabet) + "]{" + strconv.Itoa(r.Width) + "}"
}

// alphabetClass writes an alphabet as the inside of a character class,
// with runs of three or more consecutive characters as ranges ("A-Z").
func alphabetClass(a string) string {
	b := []byte(a)
	sort.Slice(b, func(i, j int) bool { return b[i] < b[j] })
	var out strings.Builder
	for i := 0; i < len(b); {
		j := i
		for j+1 < len(b) && b[j+1] == b[j]+1 {
			j++
		}
		if j-i >= 2 {
			out.WriteString(regexpClassEscape(string(b[i])) + "-" + regexpClassEscape(string(b[j])))
		} else {
			out.WriteString(regexpClassEscape(string(b[i : j+1])))
		}
		i = j + 1
	}
	return out.String()
}

// regexpClassEscape escapes s for use inside an RE2 character class.
func regexpClassEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\]^-[`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

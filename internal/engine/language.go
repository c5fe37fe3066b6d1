package engine

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/lang"
)

// languages gives every part the language it prints — as an RE2 pattern
// and as an automaton — and its longest output.
func (c *compiler) languages() error {
	pl := c.pl
	for i := range pl.parts {
		p := &pl.parts[i]
		switch p.Kind {
		case Text, Setter:
			p.pattern, p.nfa, p.max = regexp.QuoteMeta(p.Lit), lang.Literal(p.Lit), len(p.Lit)
		case Var:
			hi := -1
			if p.maxBytes > 0 {
				hi = p.maxBytes
			}
			// maxlen= counts characters, as a person and a database
			// column (VARCHAR(n)) count them: MÜLLER fits maxlen=6.
			p.nfa, p.max = lang.RepeatRunes(p.chars, 1, hi), hi
			class := "[" + p.charsArg + "]"
			if p.charsArg == "" {
				class = "[^" + lang.Runes(p.seps).String() + "]"
				if p.seps == "" {
					class = `(?s:.)`
				}
			}
			if hi > 0 {
				p.pattern = class + "{1," + strconv.Itoa(hi) + "}"
			} else {
				p.pattern = class + "+"
			}
		case Seq:
			if p.Digits != "" {
				if err := p.digitsLanguage(); err != nil {
					return c.errAt(p.Offset, "%s: %v", p.Name, err)
				}
				continue
			}
			// Sequences issue positive numbers: the language has no
			// all-zero text, so that "0" next to a sequence is a fence.
			w := strconv.Itoa(p.Width)
			var err error
			switch {
			case p.Width == 0:
				p.pattern, p.max = `[1-9][0-9]{0,18}`, 19
				p.nfa, err = lang.Regexp(p.pattern)
			case !p.Grow || p.Width == 19:
				p.pattern, p.max = `[0-9]{`+w+`}`, p.Width
				p.nfa = lang.NonZero(p.Width)
			default:
				p.pattern, p.max = `[0-9]{`+w+`}|[1-9][0-9]{`+w+`,18}`, 19
				var wide *lang.NFA
				wide, err = lang.Regexp(`[1-9][0-9]{` + w + `,18}`)
				p.nfa = lang.Union(lang.NonZero(p.Width), wide)
			}
			if err != nil {
				return c.errAt(p.Offset, "%s: %v", p.Name, err)
			}
			if p.Grow && p.Width == 19 {
				p.max = 19
			}
		default:
			if err := c.exprLanguage(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// exprLanguage takes an expression's language from its Pattern, or, without
// one, any text up to its MaxLen.
func (c *compiler) exprLanguage(p *Part) error {
	var err error
	var pat string
	hasPat := false
	if err := safe(func() {
		p.max = p.expr.MaxLen()
		if pt, ok := p.expr.(expression.Patterner); ok {
			pat, hasPat = pt.Pattern(), true
		}
	}); err != nil {
		return c.causeAt(p.Offset, p.Name, err)
	}
	if p.max < 0 {
		p.max = -1
	}
	if !hasPat {
		p.anyText = true
		hi := p.max
		if hi > MaxVarLen {
			hi = -1 // counted or not, text this long runs into anything
		}
		p.nfa = lang.Repeat(lang.Any, 0, hi)
		if p.max >= 0 {
			p.pattern = `(?s:.){0,` + strconv.Itoa(p.max) + `}`
		} else {
			p.pattern = `(?s:.)*`
		}
		return nil
	}
	if _, err := regexp.Compile(pat); err != nil {
		return c.errAt(p.Offset, "%s: Pattern() is not a valid regular expression: %v", p.Name, err)
	}
	if p.nfa, err = lang.Regexp(pat); err != nil {
		return c.causeAt(p.Offset, p.Name, fmt.Errorf("Pattern(): %w", err))
	}
	p.pattern = pat
	return nil
}

// regexp builds the public pattern: anchored, a named group per dynamic
// part. Group names are the part's name with characters other than ASCII
// letters, digits and "_" replaced by "_", made unique with "_2", "_3"...
func (c *compiler) regexp() string {
	pl := c.pl
	used := map[string]bool{}
	var b strings.Builder
	b.WriteString("^")
	for i := range pl.parts {
		p := &pl.parts[i]
		if p.Kind == Text {
			b.WriteString(p.pattern)
			continue
		}
		name := groupName(p.Name)
		for k := 2; used[name]; k++ {
			name = fmt.Sprintf("%s_%d", groupName(p.Name), k)
		}
		used[name] = true
		p.group = name
		b.WriteString("(?<" + name + ">" + p.pattern + ")")
	}
	b.WriteString("$")
	return b.String()
}

func groupName(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if !('a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9' || ch == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || '0' <= b[0] && b[0] <= '9' {
		return "p" + string(b)
	}
	return string(b)
}

// langChain is the template's language as a chain of parts, for the proof.
func (pl *Plan) langChain() lang.Chain {
	ch := make(lang.Chain, len(pl.parts))
	for i := range pl.parts {
		ch[i] = lang.Link{NFA: pl.parts[i].nfa, Marked: pl.parts[i].marked}
	}
	return ch
}

// digitsLanguage is the language of a sequence part with radix= or
// alphabet=: its numbers in its digits, never all the digit for 0.
func (p *Part) digitsLanguage() error {
	class := func(ds string) string {
		var b strings.Builder
		b.WriteByte('[')
		for i := 0; i < len(ds); i++ {
			if strings.IndexByte(`\]-^[`, ds[i]) >= 0 {
				b.WriteByte('\\')
			}
			b.WriteByte(ds[i])
		}
		b.WriteByte(']')
		return b.String()
	}
	all, rest := class(p.Digits), class(p.Digits[1:])
	digits := lang.Runes(p.Digits)
	longest := len(p.appendDigits(nil, math.MaxInt64, 0))
	var err error
	switch {
	case p.Width == 0:
		p.pattern, p.max = rest+all+"{0,"+strconv.Itoa(longest-1)+"}", longest
		p.nfa, err = lang.Regexp(p.pattern)
	case !p.Grow || p.Width >= longest:
		p.pattern, p.max = all+"{"+strconv.Itoa(p.Width)+"}", p.Width
		p.nfa = lang.NonZeroOver(p.Width, rune(p.Digits[0]), digits)
	default:
		wide := rest + all + "{" + strconv.Itoa(p.Width) + "," + strconv.Itoa(longest-1) + "}"
		p.pattern, p.max = all+"{"+strconv.Itoa(p.Width)+"}|"+wide, longest
		var w *lang.NFA
		w, err = lang.Regexp(wide)
		p.nfa = lang.Union(lang.NonZeroOver(p.Width, rune(p.Digits[0]), digits), w)
	}
	return err
}

// Outside returns the first part that can print a character outside
// allowed, and that character; ok is false when every part keeps to it.
func (pl *Plan) Outside(allowed string) (p *Part, r rune, ok bool) {
	var rs []lang.Range
	for _, c := range allowed {
		rs = append(rs, lang.Range{Lo: c, Hi: c})
	}
	set := lang.NewSet(rs...)
	for i := range pl.parts {
		if out := pl.parts[i].nfa.Alphabet().Minus(set); !out.Empty() {
			return &pl.parts[i], out.Nth(0), true
		}
	}
	return nil, 0, false
}

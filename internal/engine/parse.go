package engine

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/builtin"
	"github.com/sngen/sn/internal/host"
)

// Reading is what a number reads back as.
type Reading struct {
	// Key and Seq are those of the first sequence part.
	Key string
	Seq int64
	// Vars holds the variables and setters read back.
	Vars map[string]string
	// Draws has the key and value of each sequence part, in position.
	Draws []Draw
}

// Draw is one sequence part's key and value.
type Draw struct {
	Part   string
	Offset int
	Key    string
	Seq    int64
}

// Invalid says why a number is not one the template prints.
type Invalid struct {
	Number string
	Part   string // "" when the number is too long or too short
	Offset int    // of Part in the template, or -1
	Pos    int    // byte offset in Number where the problem starts
	Err    error
}

// Error says which part of the number is wrong.
func (e *Invalid) Error() string {
	if e.Part == "" {
		return fmt.Sprintf("sn: invalid number %q: %v", e.Number, e.Err)
	}
	return fmt.Sprintf("sn: invalid number %q: %s at offset %d: %v", e.Number, e.Part, e.Offset, e.Err)
}

// Unwrap returns ErrInvalidNumber and the part's own error.
func (e *Invalid) Unwrap() []error { return []error{ErrInvalidNumber, e.Err} }

// splitLimit bounds the splits Parse tries for one number: the proof makes
// the key and the sequence value the same in every split, so only checks of
// the parts around them (a check character over everything before it) can
// fail in one split and pass in another.
const splitLimit = 64

// Parse reads s back: the parts' spans, the sequence values, the counter
// keys and the variables. It is the inverse of Next. It checks what Next
// guarantees: the structure and widths, real dates, check characters and
// every custom part's Check. The error is an *Invalid.
//
// It reads in time linear in len(s) for the structure: a backward pass
// over the whole template's automaton says where each part can start and
// still let the rest read the rest, so that the search for a split never
// follows a dead end.
func (pl *Plan) Parse(s string) (Reading, error) {
	// maxLen counts a literal's bytes and a variable's characters: the
	// characters of s are at most its bytes, and never more than maxLen.
	if pl.maxLen >= 0 && len(s) > pl.maxLen && utf8.RuneCountInString(s) > pl.maxLen {
		return Reading{}, pl.diagnose(s) // too long: say where
	}
	live := pl.chain.Reach(s)
	if !live.Live(0, 0) {
		return Reading{}, pl.diagnose(s)
	}
	var first error
	var unfit *Invalid // the first text a part cannot have printed
	tried := 0
	var found *Reading
	spans := make([][2]int, len(pl.parts))
	var walk func(i, pos int) bool // true: stop
	walk = func(i, pos int) bool {
		if i == len(pl.parts) {
			tried++
			r, err := pl.read(s, spans)
			if err == nil {
				found = &r
				return true
			}
			if first == nil {
				first = err
			}
			return tried >= splitLimit
		}
		p := &pl.parts[i]
		stop := false
		p.nfa.Scan(s, pos, func(end int) bool {
			if !live.Live(i+1, end) {
				return true
			}
			if err := p.fits(s[pos:end]); err != nil {
				if unfit == nil {
					unfit = &Invalid{Number: s, Part: p.label(), Offset: p.Offset, Pos: pos, Err: err}
				}
				return true
			}
			spans[i] = [2]int{pos, end}
			stop = walk(i+1, end)
			return !stop
		})
		return stop
	}
	walk(0, 0)
	switch {
	case found != nil:
		return *found, nil
	case first != nil:
		return Reading{}, first
	case unfit != nil:
		return Reading{}, unfit
	}
	return Reading{}, pl.diagnose(s)
}

// fits checks what a part's text can be checked for on its own, beyond its
// language: that a date is real.
func (p *Part) fits(text string) error {
	if p.Kind != Date {
		return nil
	}
	_, err := p.date.Read(text)
	return err
}

// read checks one split of s and reads it back.
func (pl *Plan) read(s string, spans [][2]int) (Reading, error) {
	text := func(i int) string { return s[spans[i][0]:spans[i][1]] }
	bad := func(i int, err error) error {
		p := &pl.parts[i]
		return &Invalid{Number: s, Part: p.label(), Offset: p.Offset, Pos: spans[i][0], Err: err}
	}
	r := Reading{Vars: map[string]string{}}
	vals := make([]int64, len(pl.seqs))
	times := make(map[int]time.Time, len(pl.dates))
	for i := range pl.parts {
		p := &pl.parts[i]
		t := text(i)
		switch p.Kind {
		case Setter:
			r.Vars[p.Name] = p.Lit
		case Var:
			if err := p.checkVar(t, true); err != nil {
				return r, bad(i, err)
			}
			if v, ok := r.Vars[p.Name]; ok && v != t {
				return r, bad(i, fmt.Errorf("%s reads %q here and %q before", p.Name, t, v))
			}
			r.Vars[p.Name] = t
		case Seq:
			n, err := p.seqValue(t)
			if err != nil {
				return r, bad(i, err)
			}
			vals[p.ord] = n
		case Date:
			at, err := p.date.Read(t)
			if err != nil {
				return r, bad(i, err)
			}
			times[i] = at
		}
	}
	for i := range pl.parts {
		p := &pl.parts[i]
		switch p.Kind {
		case Checksum:
			payload := s[:spans[i][0]]
			if p.payload >= 0 {
				payload = text(p.payload)
			}
			want, err := p.check.Algo.Compute(payload)
			if err != nil {
				return r, bad(i, err)
			}
			if want != text(i) {
				return r, bad(i, fmt.Errorf("check %q is wrong for %q (%s)", text(i), payload, p.check.Algo.Name()))
			}
		case Custom:
			ch, ok := p.expr.(expression.Checker)
			if !ok {
				continue
			}
			rb := &readBack{pl: pl, s: s, spans: spans, cur: i, vars: r.Vars, vals: vals}
			err := safe(func() { err := ch.Check(text(i), host.Wrap(rb).(*expression.Context)); rb.err = err })
			if err == nil {
				err = rb.err
			}
			if err != nil {
				return r, bad(i, err)
			}
		}
	}
	for _, i := range pl.seqs {
		sp := &pl.parts[i]
		var owner, val string
		var b int64
		if pl.owner >= 0 {
			owner = r.Vars[OwnerKey]
		}
		if sp.KeyVar != "" {
			val = r.Vars[sp.KeyVar]
		}
		if sp.Reset != builtin.Never {
			b = bucket(times[sp.keyDate], pl.parts[sp.keyDate].date, sp.Reset)
		}
		d := Draw{Part: sp.Name, Offset: sp.Offset, Key: pl.key(sp, owner, val, b), Seq: vals[sp.ord]}
		r.Draws = append(r.Draws, d)
	}
	r.Key, r.Seq = r.Draws[0].Key, r.Draws[0].Seq
	return r, nil
}

// readBack is the host of a custom part's Context while a number is read
// back.
type readBack struct {
	pl    *Plan
	s     string
	spans [][2]int
	cur   int
	vars  map[string]string
	vals  []int64
	err   error
}

func (rb *readBack) Context() context.Context { return context.Background() }
func (rb *readBack) Time() time.Time          { return time.Time{} }
func (rb *readBack) Preview() bool            { return false }
func (rb *readBack) Printed() []byte          { return []byte(rb.s[:rb.spans[rb.cur][0]]) }
func (rb *readBack) Var(name string) (string, bool) {
	v, ok := rb.vars[name]
	return v, ok
}
func (rb *readBack) Seq() (int64, []byte, bool) {
	last := rb.pl.seqs[len(rb.pl.seqs)-1]
	sp := rb.spans[last]
	return rb.vals[rb.pl.parts[last].ord], []byte(rb.s[sp[0]:sp[1]]), true
}

// diagnose says where s stops fitting the template: the part that could not
// be read at the furthest position any reading reached.
func (pl *Plan) diagnose(s string) error {
	type at struct{ i, pos int }
	var best at
	best.i, best.pos = pl.chain.Furthest(s)
	if best.i == len(pl.parts) {
		return &Invalid{Number: s, Offset: -1, Pos: best.pos, Err: fmt.Errorf("unexpected %q after byte %d", s[best.pos:], best.pos)}
	}
	p := &pl.parts[best.i]
	if p.Kind == Date && best.pos+p.max <= len(s) {
		// Say what is wrong with the date, when it is its digits.
		if _, err := p.date.Read(s[best.pos : best.pos+p.max]); err != nil {
			return &Invalid{Number: s, Part: p.label(), Offset: p.Offset, Pos: best.pos, Err: err}
		}
	}
	if p.Kind == Seq {
		// Say so when it is a number the sequence cannot have issued.
		end := best.pos
		for end < len(s) && p.isDigit(s[end]) && (p.Grow || p.Width == 0 || end-best.pos < p.Width) {
			end++
		}
		zero := "0"
		if p.Digits != "" {
			zero = p.Digits[:1]
		}
		if t := s[best.pos:end]; t != "" && strings.Trim(t, zero) == "" && (p.Width == 0 || len(t) >= p.Width) {
			return &Invalid{Number: s, Part: p.label(), Offset: p.Offset, Pos: best.pos, Err: fmt.Errorf("%q: sequences start at 1", t)}
		}
	}
	want := p.pattern
	if p.Kind == Text {
		want = strconv.Quote(p.Lit)
	}
	found := "the end"
	if best.pos < len(s) {
		found = strconv.Quote(s[best.pos:])
	}
	return &Invalid{Number: s, Part: p.label(), Offset: p.Offset, Pos: best.pos, Err: fmt.Errorf("want %s at byte %d, found %s", want, best.pos, found)}
}

// seqValue reads the number a sequence part printed as text: the number
// itself, or with obfuscate= the number whose image it is.
func (p *Part) seqValue(text string) (int64, error) {
	n, err := p.parseDigits(text)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is out of range", text)
	case n <= 0:
		return 0, fmt.Errorf("%q: sequences start at 1", text)
	case p.perm != nil:
		if n > p.maxSeq {
			return 0, fmt.Errorf("%q is out of range", text)
		}
		return 1 + int64(p.perm.Invert(uint64(n-1))), nil
	}
	return n, nil
}

// parseDigits reads text written in the part's digits.
func (p *Part) parseDigits(text string) (int64, error) {
	if p.Digits == "" {
		return strconv.ParseInt(text, 10, 64)
	}
	if text == "" {
		return 0, strconv.ErrSyntax
	}
	b := int64(len(p.Digits))
	var n int64
	for i := 0; i < len(text); i++ {
		d := strings.IndexByte(p.Digits, text[i])
		if d < 0 {
			return 0, strconv.ErrSyntax
		}
		if n > (math.MaxInt64-int64(d))/b {
			return 0, strconv.ErrRange
		}
		n = n*b + int64(d)
	}
	return n, nil
}

// isDigit reports whether c is one of the part's digits.
func (p *Part) isDigit(c byte) bool {
	if p.Digits == "" {
		return '0' <= c && c <= '9'
	}
	return strings.IndexByte(p.Digits, c) >= 0
}

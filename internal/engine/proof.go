package engine

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sngen/sn/internal/builtin"
	"github.com/sngen/sn/internal/lang"
	"github.com/sngen/sn/parser"
)

// The proof. Every part's language is an automaton (see language.go); the
// template's language is their concatenation. A part is marked when a
// counter key or a sequence value depends on its text: the sequences, the
// variables of key= and ownerKey, the date that tells reset periods apart.
// lang.Ambiguous runs two copies of the template over one input and finds
// the shortest string that two runs split differently in a marked part.
// None means every string the template prints determines its counter keys
// and sequence values. Otherwise the split becomes concrete inputs — a
// witness — by rendering: see concretize.

// stateLimit bounds the pairs of states the proof visits.
const stateLimit = 2_000_000

// Input is one side of a witness: what a caller passes, and what the
// sequences and the random or custom parts give.
type Input struct {
	Template string            // CheckSet: the name of the input's template
	Vars     map[string]string // per-call variables
	At       time.Time         // the instant, zero when the template prints none
	Draws    []Draw            // each sequence part's key and value
	Fill     map[string]string // what random and custom parts print, by "name@offset"
}

// Ambiguity is a string printed for two different counter keys or
// numbers: the witness that a template, or a set of templates, may repeat.
type Ambiguity struct {
	Number   string // printed by both inputs
	A, B     Input
	Part     string // the part at fault, in A's template
	Offset   int    // its byte offset in A's template
	Verified bool   // both inputs were rendered and print Number
	Hint     string // what would fix it
}

// Error describes the witness.
func (a *Ambiguity) Error() string {
	if !a.Verified {
		return fmt.Sprintf("ambiguous: %q can be read both as %s and as %s (no inputs were found that print it, and none can be ruled out)", a.Number, a.A, a.B)
	}
	return fmt.Sprintf("ambiguous: %q is printed by %s and by %s", a.Number, a.A, a.B)
}

// Unwrap returns ErrAmbiguous.
func (a *Ambiguity) Unwrap() error { return ErrAmbiguous }

// String describes the input for a message: {template "a", area="1", at
// 2017-03-04T00:00:00Z, seq=11 from counter "K"}.
func (in Input) String() string {
	var parts []string
	if in.Template != "" {
		parts = append(parts, "template "+strconv.Quote(in.Template))
	}
	names := make([]string, 0, len(in.Vars))
	for k := range in.Vars {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		parts = append(parts, k+"="+strconv.Quote(in.Vars[k]))
	}
	if !in.At.IsZero() {
		parts = append(parts, "at "+in.At.Format(time.RFC3339))
	}
	for _, d := range in.Draws {
		parts = append(parts, fmt.Sprintf("%s=%d from counter %q", d.Part, d.Seq, d.Key))
	}
	fills := make([]string, 0, len(in.Fill))
	for k := range in.Fill {
		fills = append(fills, k)
	}
	sort.Strings(fills)
	for _, k := range fills {
		parts = append(parts, fmt.Sprintf("%s printing %q", k, in.Fill[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// prove refuses a template that can print one string for two counter keys
// or two numbers.
func (c *compiler) prove() error {
	pl := c.pl
	amb, err := search(pl, pl, false, true)
	if amb == nil {
		if errors.Is(err, lang.ErrTooComplex) {
			return c.errAt(0, "the template is too complex to prove that no two numbers print alike (bound its variables with chars= or maxlen=, or separate them with literal text)")
		}
		return nil
	}
	part := &pl.parts[amb.part]
	amb.Part, amb.Offset = part.label(), part.Offset
	amb.Hint = splitHint(pl, amb.part)
	return &TemplateError{At: &parser.Error{Template: pl.src, Offset: part.Offset, Msg: amb.Error() + "; " + amb.Hint}, Err: &amb.Ambiguity}
}

func splitHint(pl *Plan, i int) string {
	p := &pl.parts[i]
	next := ""
	if i+1 < len(pl.parts) {
		next = " and " + pl.parts[i+1].Source
	}
	if p.Kind == Text {
		return fmt.Sprintf("the text %q%s can be read in more than one place: separate them with text the parts cannot print", p.Lit, next)
	}
	return fmt.Sprintf("where %s ends%s begins cannot be told: put literal text that %s cannot print after it, or bound it (chars=, maxlen=, width=)", p.Source, next, p.Source)
}

// centuryWitness refuses reset= read from a yy date without a window.
func (c *compiler) centuryWitness(seq, date int) error {
	pl := c.pl
	d := pl.parts[date].date
	t, t100 := time.Date(2017, 3, 4, 12, 0, 0, 0, d.Loc), time.Date(2117, 3, 4, 12, 0, 0, 0, d.Loc)
	if pl.parts[seq].Reset == builtin.Week { // the Mondays of week 10
		t, t100 = time.Date(2017, 3, 6, 12, 0, 0, 0, d.Loc), time.Date(2117, 3, 8, 12, 0, 0, 0, d.Loc)
	}
	a := example(pl, t)
	b := example(pl, t100)
	sa, errA := pl.renderInput(a)
	sb, errB := pl.renderInput(b)
	msg := fmt.Sprintf("%s: reset=%s is read from %s, whose two-digit year prints the same digits for 2017 and 2117; add window=2000 to it (years 2000-2099) or print the year in four digits",
		pl.parts[seq].Name, pl.parts[seq].Reset, pl.parts[date].Source)
	if errA != nil || errB != nil || sa != sb {
		return c.errAt(pl.parts[date].Offset, "%s", msg)
	}
	amb := &Ambiguity{Number: sa, A: a, B: b, Part: pl.parts[date].label(), Offset: pl.parts[date].Offset, Verified: true, Hint: msg}
	return &TemplateError{At: &parser.Error{Template: pl.src, Offset: amb.Offset, Msg: amb.Error() + "; " + msg}, Err: amb}
}

// example returns inputs at t with the shortest readable values.
func example(pl *Plan, t time.Time) Input {
	in := Input{Vars: map[string]string{}, Fill: map[string]string{}}
	if pl.needTime {
		in.At = t
	}
	for i := range pl.parts {
		p := &pl.parts[i]
		switch p.Kind {
		case Var:
			in.Vars[p.Name] = string(p.chars.Pick())
		case Random, Custom:
			s, _ := p.nfa.Shortest()
			in.Fill[fillKey(p)] = s
		}
	}
	for _, i := range pl.seqs {
		s := &pl.parts[i]
		in.Draws = append(in.Draws, Draw{Part: s.Name, Offset: s.Offset, Key: pl.callKey(s, t, in.Vars), Seq: 1})
	}
	return in
}

func fillKey(p *Part) string { return p.Name + "@" + strconv.Itoa(p.Offset) }

// renderInput renders what in would print, drawing nothing.
func (pl *Plan) renderInput(in Input) (string, error) {
	at, err := pl.prepare(in.At, in.Vars, false)
	if err != nil {
		return "", err
	}
	c := call{at: at, vars: in.Vars, mode: modeWitness, fill: map[int]string{}}
	vals := c.setVals(len(in.Draws))
	for k, d := range in.Draws {
		vals[k] = d.Seq
	}
	for i := range pl.parts {
		if p := &pl.parts[i]; p.Kind == Random || p.Kind == Custom {
			c.fill[i] = in.Fill[fillKey(p)]
		}
	}
	b, err := pl.render(nil, &c)
	return string(b), err
}

// search looks for strings a and b read differently, and for inputs that
// print one. It returns nil when there is no such string. Finding whether
// there is one visits each pair of states once; when the shortest
// witnesses have no inputs (check characters rule them out), it looks
// again, letting more paths through each pair, for witnesses of other
// shapes.
func search(a, b *Plan, diverged, sameCounters bool) (*ambiguity, error) {
	var amb *ambiguity
	for _, visits := range []int{1, 3, 8} {
		ws, err := lang.Ambiguous(a.chain, b.chain, diverged, 64, visits, stateLimit)
		if len(ws) == 0 {
			return amb, err
		}
		amb = concretize(a, b, ws, sameCounters)
		if amb.Verified {
			break
		}
	}
	return amb, nil
}

// ambiguity is an Ambiguity with the index of the part at fault.
type ambiguity struct {
	Ambiguity
	part int
}

// concretize turns split witnesses into inputs that print one string. For
// each witness it fills the string with runes both readings allow, derives
// each reading's inputs from it (variables, sequence values, the instant
// from the printed date, what random and custom parts printed) and renders
// them; what one rendering prints differently (check characters, a
// variable printed twice, a date in two time zones) is fed to the other
// reading, as long as both still read the string the way the witness
// splits it, until both print the same string. sameCounters says whether
// equal keys of a and b are one counter (one template, or two sharing a
// store); then the two inputs must differ in a key or a value to be a
// repeat.
func concretize(a, b *Plan, ws []lang.Witness, sameCounters bool) *ambiguity {
	rng := rand.New(rand.NewPCG(1, 2))
	// Every witness gets a turn, shortest first, then more turns each with
	// random fills: dependencies such as check characters are met by one
	// fill in ten or a hundred.
	const attempts = 256
	for n := 0; n < attempts; n++ {
		w, try := ws[n%len(ws)], n/len(ws)
		{
			runes := []rune(w.Text)
			switch {
			case try >= 1 && try <= len(uniform):
				// One rune wherever it fits: parts that must agree (two
				// dates of one instant) agree on uniform text.
				r := rune(uniform[try-1])
				for i, l := range w.Labels {
					if l.Has(r) {
						runes[i] = r
					}
				}
			case try > len(uniform):
				for i, l := range w.Labels {
					runes[i] = pickRandom(l, rng, n > attempts*3/4)
				}
			}
			for round := 0; round < 8; round++ {
				s := string(runes)
				inA, outA, okA := a.reading(s, runeSpans(s, w.A))
				inB, outB, okB := b.reading(s, runeSpans(s, w.B))
				if okA && okB && outA == s && outB == s {
					if !sameCounters || differ(inA, inB) {
						return &ambiguity{Ambiguity{Number: s, A: inA, B: inB, Verified: true}, firstDiff(w)}
					}
					break
				}
				outs := []string{outA, outB}
				oks := []bool{okA, okB}
				if round%2 == 1 {
					outs[0], outs[1], oks[0], oks[1] = outB, outA, okB, okA
				}
				next := s
				for k, out := range outs {
					if oks[k] && out != s && readsAs(a, out, w.A) && readsAs(b, out, w.B) {
						next = out
						break
					}
				}
				if next == s {
					break
				}
				runes = []rune(next)
			}
		}
	}
	w := ws[0]
	inA, _, _ := a.reading(w.Text, runeSpans(w.Text, w.A))
	inB, _, _ := b.reading(w.Text, runeSpans(w.Text, w.B))
	return &ambiguity{Ambiguity{Number: w.Text, A: inA, B: inB}, firstDiff(w)}
}

// uniform are the runes of the uniform fills concretize tries first.
const uniform = "1029384756"

// readsAs reports whether s, split as sp (in runes), gives every part of pl
// a text of its language.
func readsAs(pl *Plan, s string, sp lang.Split) bool {
	n := utf8.RuneCountInString(s)
	if len(sp) == 0 || sp[len(sp)-1][1] != n {
		return false
	}
	for i, x := range runeSpans(s, sp) {
		if !pl.parts[i].nfa.Match(s[x[0]:x[1]]) {
			return false
		}
	}
	return true
}

func pickRandom(s lang.Set, rng *rand.Rand, any bool) rune {
	if !any {
		for _, t := range []lang.Set{s.And(lang.NewSet(lang.Range{Lo: '0', Hi: '9'}, lang.Range{Lo: 'A', Hi: 'Z'}, lang.Range{Lo: 'a', Hi: 'z'})), s.And(lang.Set{{Lo: 0x21, Hi: 0x7E}})} {
			if !t.Empty() {
				return t.Nth(rng.IntN(t.Size()))
			}
		}
	}
	return s.Nth(rng.IntN(s.Size()))
}

// runeSpans converts spans in runes of s to spans in bytes.
func runeSpans(s string, sp lang.Split) [][2]int {
	offs := make([]int, 0, len(s)+1)
	for i := range s {
		offs = append(offs, i)
	}
	offs = append(offs, len(s))
	out := make([][2]int, len(sp))
	for i, x := range sp {
		out[i] = [2]int{offs[x[0]], offs[x[1]]}
	}
	return out
}

// firstDiff returns the first part whose span differs between the two
// readings.
func firstDiff(w lang.Witness) int {
	for i := range w.A {
		if i < len(w.B) && w.A[i] != w.B[i] {
			return i
		}
	}
	return 0
}

func differ(a, b Input) bool {
	if len(a.Draws) != len(b.Draws) {
		return true
	}
	da, db := slices.Clone(a.Draws), slices.Clone(b.Draws)
	cmp := func(x, y Draw) int {
		if c := strings.Compare(x.Key, y.Key); c != 0 {
			return c
		}
		return int(x.Seq - y.Seq)
	}
	slices.SortFunc(da, cmp)
	slices.SortFunc(db, cmp)
	for i := range da {
		if da[i].Key != db[i].Key || da[i].Seq != db[i].Seq {
			return true
		}
	}
	return false
}

// reading derives the inputs that would print s split as spans, and renders
// them; ok is false when no input can (a sequence value of 0, an unreal
// date). With several date parts, each in turn gives the instant, until
// one renders s.
func (pl *Plan) reading(s string, spans [][2]int) (in Input, out string, ok bool) {
	in = Input{Vars: map[string]string{}, Fill: map[string]string{}}
	vals := make([]int64, len(pl.seqs))
	for i := range pl.parts {
		p := &pl.parts[i]
		t := s[spans[i][0]:spans[i][1]]
		switch p.Kind {
		case Var:
			if _, seen := in.Vars[p.Name]; !seen {
				in.Vars[p.Name] = t
			}
		case Seq:
			n, err := p.seqValue(t)
			if err != nil {
				return in, "", false
			}
			vals[p.ord] = n
		case Random, Custom:
			in.Fill[fillKey(p)] = t
		}
	}
	instants := []time.Time{{}}
	if pl.needTime {
		instants = instants[:0]
		for _, i := range pl.dates {
			if at, err := pl.parts[i].date.Read(s[spans[i][0]:spans[i][1]]); err == nil {
				instants = append(instants, at)
			}
		}
		if len(pl.dates) == 0 {
			instants = append(instants, time.Date(2017, 3, 4, 12, 0, 0, 0, time.UTC))
		}
	}
	for _, at := range instants {
		in.At = at
		if _, err := pl.prepare(at, in.Vars, false); err != nil {
			continue
		}
		in.Draws = in.Draws[:0]
		for _, i := range pl.seqs {
			sp := &pl.parts[i]
			in.Draws = append(in.Draws, Draw{Part: sp.Name, Offset: sp.Offset, Key: pl.callKey(sp, at, in.Vars), Seq: vals[sp.ord]})
		}
		o, err := pl.renderInput(in)
		if err != nil {
			continue
		}
		if out, ok = o, true; out == s {
			break
		}
	}
	return in, out, ok
}

// Member is one template of a set checked by [CheckSet].
type Member struct {
	Name  string
	Plan  *Plan
	Store string // members with equal Store share counters
}

// CheckSet returns an error when one member can print a number that
// another prints from a different counter or value. Members on different
// stores must print disjoint numbers; members on one store may share a
// counter only when they read it from the same places.
func CheckSet(ms []Member) error {
	for _, pair := range candidates(ms) {
		a, b := ms[pair[0]], ms[pair[1]]
		if err := checkPair(a, b, a.Store == b.Store); err != nil {
			return err
		}
	}
	return nil
}

// checkPair proves that a and b never print one string for two counters
// or numbers; same says they share a store.
func checkPair(a, b Member, same bool) error {
	diverged := !same || !keysMeet(a.Plan, b.Plan) || signature(a.Plan) != signature(b.Plan)
	amb, err := search(a.Plan, b.Plan, diverged, same)
	if amb == nil {
		if errors.Is(err, lang.ErrTooComplex) {
			return &SetError{A: a.Name, B: b.Name, Err: fmt.Errorf("too complex to prove that they never print alike")}
		}
		return nil
	}
	amb.A.Template, amb.B.Template = a.Name, b.Name
	p := &a.Plan.parts[amb.part]
	amb.Part, amb.Offset = p.label(), p.Offset
	amb.Hint = "give them different literal text, or put them on one store with the same counter"
	return &SetError{A: a.Name, B: b.Name, Err: &amb.Ambiguity}
}

// candidates returns the pairs i < j of members that may print one
// string, in order: those whose literal prefixes (the text before the
// first part that varies) are one a prefix of the other, whose literal
// suffixes nest likewise, and whose first characters can meet, position
// by position, as far as each template's first parts have a fixed length
// (a date of yyyyMMdd is eight digits, then text). Other pairs print
// nothing alike. The prefixes are sorted, so that each member meets only
// the members under its prefix and those whose prefix is under its own: a
// set of templates with distinct literal text is checked in about n log
// n. Templates that start with a part of varying length (a variable) are
// checked against every other.
func candidates(ms []Member) [][2]int {
	e := make([]ends, len(ms))
	for i, m := range ms {
		e[i] = endsOf(m.Plan)
	}
	return candidatesOf(e)
}

// ends is what candidates compares of a template: its literal prefix and
// suffix, and the characters of its first positions.
type ends struct {
	prefix, suffix string
	head           []lang.Set
}

// candidatesOf is candidates of the templates' ends.
func candidatesOf(e []ends) [][2]int {
	ms := e
	meet := func(i, j int) bool {
		a, b := &e[i], &e[j]
		if !strings.HasPrefix(a.prefix, b.prefix) && !strings.HasPrefix(b.prefix, a.prefix) {
			return false
		}
		if !strings.HasSuffix(a.suffix, b.suffix) && !strings.HasSuffix(b.suffix, a.suffix) {
			return false
		}
		for k := range min(len(a.head), len(b.head)) {
			if !a.head[k].Meets(b.head[k]) {
				return false
			}
		}
		return true
	}
	// Each head is a leading run of character classes (a date's digits,
	// a variable's first character), then literal characters: its key is
	// the classes (interned) and the literal run after them. Members with
	// the same classes meet only if one's literal run is a prefix of the
	// other's, so within a group the sorted keys give the pairs as literal
	// prefixes do; members of two groups are compared one by one.
	ids := map[string]rune{}
	group := map[string][]int{}
	key := make([]string, len(ms))
	for i := range ms {
		var classes, lits strings.Builder
		h := e[i].head
		k := 0
		for ; k < len(h) && !(len(h[k]) == 1 && h[k][0].Lo == h[k][0].Hi); k++ {
			c := h[k].String()
			id, ok := ids[c]
			if !ok {
				id = rune(len(ids))
				ids[c] = id
			}
			classes.WriteRune(id)
		}
		for ; k < len(h) && len(h[k]) == 1 && h[k][0].Lo == h[k][0].Hi; k++ {
			lits.WriteRune(h[k][0].Lo)
		}
		key[i] = lits.String()
		group[classes.String()] = append(group[classes.String()], i)
	}
	var pairs [][2]int
	add := func(i, j int) {
		if meet(i, j) {
			pairs = append(pairs, [2]int{min(i, j), max(i, j)})
		}
	}
	names := slices.Sorted(maps.Keys(group))
	for gi, g := range names {
		members := group[g]
		if g == "" {
			// No leading classes: the literal prefix is the key.
			slices.SortFunc(members, func(a, b int) int { return strings.Compare(e[a].prefix, e[b].prefix) })
			for k, i := range members {
				for _, j := range members[k+1:] {
					if !strings.HasPrefix(e[j].prefix, e[i].prefix) {
						break
					}
					add(i, j)
				}
			}
		} else {
			slices.SortFunc(members, func(a, b int) int { return strings.Compare(key[a], key[b]) })
			for k, i := range members {
				for _, j := range members[k+1:] {
					if !strings.HasPrefix(key[j], key[i]) {
						break
					}
					add(i, j)
				}
			}
		}
		for _, h := range names[gi+1:] {
			for _, i := range members {
				for _, j := range group[h] {
					add(i, j)
				}
			}
		}
	}
	slices.SortFunc(pairs, func(a, b [2]int) int {
		if c := a[0] - b[0]; c != 0 {
			return c
		}
		return a[1] - b[1]
	})
	return slices.Compact(pairs)
}

// head returns the sets of runes of the first positions of pl's strings,
// at most max, through its parts of fixed length (see lang.NFA.Head).
func head(pl *Plan, max int) []lang.Set {
	var out []lang.Set
	for i := range pl.parts {
		p := &pl.parts[i]
		if p.nfa == nil {
			break
		}
		sets, whole := p.nfa.Head(max - len(out))
		out = append(out, sets...)
		if !whole || len(out) >= max {
			break
		}
	}
	return out
}

// literalEnd returns the text every string of pl starts with (or, with
// suffix, ends with): its leading (trailing) text and setters.
func literalEnd(pl *Plan, suffix bool) string {
	var parts []string
	n := len(pl.parts)
	for k := range n {
		i := k
		if suffix {
			i = n - 1 - k
		}
		p := &pl.parts[i]
		if p.Kind != Text && p.Kind != Setter {
			break
		}
		parts = append(parts, p.Lit)
	}
	if suffix {
		slices.Reverse(parts)
	}
	return strings.Join(parts, "")
}

// SetError is a refusal of two templates of a set.
type SetError struct {
	A, B string
	Err  error
}

// Error names the two templates and the witness.
func (e *SetError) Error() string {
	return fmt.Sprintf("sn: templates %q and %q: %v", e.A, e.B, e.Err)
}

// Unwrap returns Err.
func (e *SetError) Unwrap() error { return e.Err }

// keysMeet reports whether a and b can give one counter key.
func keysMeet(a, b *Plan) bool {
	if a.owner >= 0 || b.owner >= 0 {
		return true
	}
	return a.base == b.base
}

// signature describes the marked parts of a plan in order, with each
// sequence's counter key as far as the template fixes it (its base, a
// setter's value for key=): two plans on one store compare their readings
// part by part only when their signatures are equal, and then equal text
// in the marked parts means equal keys and numbers.
func signature(pl *Plan) string {
	var b strings.Builder
	for i := range pl.parts {
		p := &pl.parts[i]
		if !p.marked {
			continue
		}
		switch p.Kind {
		case Seq:
			// The key with what is fixed in it: base, setters of key=;
			// and how the number is printed beyond its width: its
			// digits and its permutation (equal text must mean equal
			// numbers: with an ownerKey, the key does not say them).
			fmt.Fprintf(&b, "seq(%s,%q,%q,%q,%q);", p.Name, pl.KeyPattern(i), p.Digits, p.Obfuscate, p.keyCheck)
		case Var:
			fmt.Fprintf(&b, "var(%s);", p.Name)
		case Date:
			fmt.Fprintf(&b, "date(%s,%d,%d);", p.date.Format, p.date.Window, p.date.Fiscal)
		}
	}
	return b.String()
}

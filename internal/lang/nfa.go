package lang

import (
	"fmt"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// NFA is a nondeterministic automaton over runes without empty moves. State
// 0 is the start. An NFA is immutable once built and safe for concurrent
// use.
type NFA struct {
	states []state
}

type state struct {
	edges  []edge
	accept bool
}

type edge struct {
	label Set
	to    int
}

// Literal returns the NFA of exactly s.
func Literal(s string) *NFA {
	n := &NFA{states: make([]state, 0, len(s)+1)}
	for _, r := range s {
		i := len(n.states)
		n.states = append(n.states, state{edges: []edge{{Set{{r, r}}, i + 1}}})
	}
	n.states = append(n.states, state{accept: true})
	return n
}

// Repeat returns the NFA of strings of runes from set whose length in bytes
// is between lo and hi; hi < 0 means no upper bound.
func Repeat(set Set, lo, hi int) *NFA { return repeat(set, lo, hi, false) }

// RepeatRunes returns the NFA of strings of runes from set whose length in
// runes (characters) is between lo and hi; hi < 0 means no upper bound.
func RepeatRunes(set Set, lo, hi int) *NFA { return repeat(set, lo, hi, true) }

func repeat(set Set, lo, hi int, runes bool) *NFA {
	lens := [5]Set{}
	for k := 1; k <= 4; k++ {
		lens[k] = set.byLen(k)
	}
	top := hi
	if hi < 0 {
		top = lo // counts saturate at lo, which then loops
	}
	n := &NFA{states: make([]state, top+1)}
	for c := 0; c <= top; c++ {
		st := &n.states[c]
		st.accept = c >= lo
		for k := 1; k <= 4; k++ {
			if lens[k].Empty() {
				continue
			}
			to := c + k
			if runes {
				to = c + 1
			}
			if hi < 0 {
				to = min(to, lo)
			} else if to > hi {
				continue
			}
			st.edges = append(st.edges, edge{lens[k], to})
		}
	}
	return n.trim()
}

// ErrPattern is wrapped by the errors of [Regexp].
var ErrPattern = fmt.Errorf("lang: pattern")

// Regexp returns the NFA of the strings that the RE2 pattern matches in
// full. Counted repetition counts runes. The pattern may not contain
// anchors or word boundaries: a part's language does not depend on its
// neighbours.
func Regexp(pattern string) (*NFA, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrPattern, pattern, err)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrPattern, pattern, err)
	}
	// closure lists the instructions reachable from pc without reading.
	closure := func(pc uint32) (runes []uint32, match bool, err error) {
		seen := map[uint32]bool{}
		stack := []uint32{pc}
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[p] {
				continue
			}
			seen[p] = true
			in := &prog.Inst[p]
			switch in.Op {
			case syntax.InstAlt, syntax.InstAltMatch:
				stack = append(stack, in.Out, in.Arg)
			case syntax.InstCapture, syntax.InstNop:
				stack = append(stack, in.Out)
			case syntax.InstEmptyWidth:
				return nil, false, fmt.Errorf("%w %q: anchors and word boundaries are not allowed in a part's pattern", ErrPattern, pattern)
			case syntax.InstMatch:
				match = true
			case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
				runes = append(runes, p)
			}
		}
		return runes, match, nil
	}
	ids := map[uint32]int{uint32(prog.Start): 0}
	order := []uint32{uint32(prog.Start)}
	n := &NFA{}
	for k := 0; k < len(order); k++ {
		runes, match, err := closure(order[k])
		if err != nil {
			return nil, err
		}
		st := state{accept: match}
		for _, p := range runes {
			in := &prog.Inst[p]
			to, ok := ids[in.Out]
			if !ok {
				to = len(order)
				ids[in.Out] = to
				order = append(order, in.Out)
			}
			st.edges = append(st.edges, edge{instSet(in), to})
		}
		n.states = append(n.states, st)
	}
	return n.trim(), nil
}

// instSet returns the runes a regexp instruction reads.
func instSet(in *syntax.Inst) Set {
	switch in.Op {
	case syntax.InstRuneAny:
		return Any
	case syntax.InstRuneAnyNotNL:
		return Any.Minus(Set{{'\n', '\n'}})
	}
	var rs []Range
	for i := 0; i+1 < len(in.Rune); i += 2 {
		rs = append(rs, Range{in.Rune[i], in.Rune[i+1]})
	}
	if len(in.Rune) == 1 {
		rs = append(rs, Range{in.Rune[0], in.Rune[0]})
	}
	if syntax.Flags(in.Arg)&syntax.FoldCase != 0 {
		for _, r := range append([]Range(nil), rs...) {
			if r.Hi-r.Lo > 1024 {
				continue // a wide range: folding adds little and costs much
			}
			for c := r.Lo; c <= r.Hi; c++ {
				for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
					rs = append(rs, Range{f, f})
				}
			}
		}
	}
	return NewSet(rs...)
}

// trim removes the states that cannot reach an accepting state, and edges
// with empty labels, keeping state 0.
func (n *NFA) trim() *NFA {
	live := make([]bool, len(n.states))
	for changed := true; changed; {
		changed = false
		for i, st := range n.states {
			if live[i] {
				continue
			}
			ok := st.accept
			for _, e := range st.edges {
				ok = ok || (live[e.to] && !e.label.Empty())
			}
			if ok {
				live[i], changed = true, true
			}
		}
	}
	id := make([]int, len(n.states))
	out := &NFA{}
	for i := range n.states {
		id[i] = -1
		if live[i] || i == 0 {
			id[i] = len(out.states)
			out.states = append(out.states, state{accept: n.states[i].accept})
		}
	}
	for i, st := range n.states {
		if id[i] < 0 {
			continue
		}
		for _, e := range st.edges {
			if live[e.to] && !e.label.Empty() {
				out.states[id[i]].edges = append(out.states[id[i]].edges, edge{e.label, id[e.to]})
			}
		}
	}
	return out
}

// Head returns, for the first positions (runes) of n's strings, the set
// of runes each may be, as long as no string has ended: every string of n
// is longer than len(sets), and its i-th rune is in sets[i]. It stops at
// max positions. whole reports whether every string of n has exactly
// len(sets) runes, so that what follows n starts right after.
func (n *NFA) Head(max int) (sets []Set, whole bool) {
	layer := []int{0}
	for len(sets) < max {
		var rs []Range
		var next []int
		seen := map[int]bool{}
		ends, goes := false, false
		for _, q := range layer {
			st := n.states[q]
			ends = ends || st.accept
			for _, e := range st.edges {
				goes = true
				rs = append(rs, e.label...)
				if !seen[e.to] {
					seen[e.to] = true
					next = append(next, e.to)
				}
			}
		}
		if ends {
			return sets, !goes
		}
		if len(next) == 0 {
			return sets, false
		}
		sets = append(sets, NewSet(rs...))
		layer = next
	}
	return sets, false
}

// Nullable reports whether n accepts the empty string.
func (n *NFA) Nullable() bool { return n.states[0].accept }

// Empty reports whether n accepts no string at all.
func (n *NFA) Empty() bool { return !n.states[0].accept && len(n.states[0].edges) == 0 }

// Size returns the number of states.
func (n *NFA) Size() int { return len(n.states) }

// Alphabet returns every rune that some string of n contains.
func (n *NFA) Alphabet() Set {
	var rs []Range
	for _, st := range n.states {
		for _, e := range st.edges {
			rs = append(rs, e.label...)
		}
	}
	return NewSet(rs...)
}

// Scan reads s from byte pos and calls end for every position e such that
// s[pos:e] is in n's language, in increasing order, until end returns
// false. It returns the furthest position it read up to while some run was
// alive: where a string that n does not accept stops fitting.
func (n *NFA) Scan(s string, pos int, end func(e int) bool) (reached int) {
	cur := []int{0}
	next := make([]int, 0, 8)
	seen := make([]bool, len(n.states))
	p := pos
	for {
		acc := false
		for _, q := range cur {
			acc = acc || n.states[q].accept
		}
		if acc && !end(p) {
			return p
		}
		if p >= len(s) || len(cur) == 0 {
			return p
		}
		r, size := utf8.DecodeRuneInString(s[p:])
		if r == utf8.RuneError && size == 1 {
			return p
		}
		next = next[:0]
		for _, q := range cur {
			for _, e := range n.states[q].edges {
				if !seen[e.to] && e.label.Has(r) {
					seen[e.to] = true
					next = append(next, e.to)
				}
			}
		}
		for _, q := range next {
			seen[q] = false
		}
		if len(next) == 0 {
			return p
		}
		cur, next = next, cur
		p += size
	}
}

// Match reports whether s is in n's language.
func (n *NFA) Match(s string) bool {
	ok := false
	n.Scan(s, 0, func(e int) bool {
		ok = e == len(s)
		return !ok
	})
	return ok
}

// Shortest returns a shortest string of n's language, made of readable
// runes where it can (see [Set.Pick]), and whether there is one.
func (n *NFA) Shortest() (string, bool) {
	type from struct {
		prev int
		r    rune
	}
	seen := map[int]from{0: {-1, 0}}
	queue := []int{0}
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		if n.states[q].accept {
			var rs []rune
			for s := q; seen[s].prev >= 0; s = seen[s].prev {
				rs = append(rs, seen[s].r)
			}
			for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
				rs[i], rs[j] = rs[j], rs[i]
			}
			return string(rs), true
		}
		for _, e := range n.states[q].edges {
			if _, ok := seen[e.to]; !ok {
				seen[e.to] = from{q, e.label.Pick()}
				queue = append(queue, e.to)
			}
		}
	}
	return "", false
}

// NonZero returns the NFA of w decimal digits that are not all zero: a
// positive number zero-padded to w digits.
func NonZero(w int) *NFA {
	// State 2c+z: c digits read, z = 1 once a digit other than 0 was.
	n := &NFA{states: make([]state, 2*(w+1))}
	zero, rest := Set{{Lo: '0', Hi: '0'}}, Set{{Lo: '1', Hi: '9'}}
	for c := 0; c < w; c++ {
		n.states[2*c].edges = []edge{{zero, 2 * (c + 1)}, {rest, 2*(c+1) + 1}}
		n.states[2*c+1].edges = []edge{{Digits, 2*(c+1) + 1}}
	}
	n.states[2*w+1].accept = true
	return n.trim()
}

// NonZeroOver returns the NFA of the strings of exactly w runes of digits
// that are not all zero: the numbers of w digits in a positional system
// whose digit for 0 is zero.
func NonZeroOver(w int, zero rune, digits Set) *NFA {
	n := &NFA{states: make([]state, 2*(w+1))}
	z := Set{{Lo: zero, Hi: zero}}
	rest := digits.Minus(z)
	for c := 0; c < w; c++ {
		n.states[2*c].edges = []edge{{z, 2 * (c + 1)}, {rest, 2*(c+1) + 1}}
		n.states[2*c+1].edges = []edge{{digits, 2*(c+1) + 1}}
	}
	n.states[2*w+1].accept = true
	return n.trim()
}

// Union returns the NFA of the strings of a or b.
func Union(a, b *NFA) *NFA {
	// State 0 starts both; then a's states, then b's, each shifted.
	n := &NFA{states: make([]state, 1, 1+len(a.states)+len(b.states))}
	for k, m := range []*NFA{a, b} {
		shift := 1
		if k == 1 {
			shift += len(a.states)
		}
		for _, st := range m.states {
			out := state{accept: st.accept}
			for _, e := range st.edges {
				out.edges = append(out.edges, edge{e.label, e.to + shift})
			}
			n.states = append(n.states, out)
		}
		n.states[0].accept = n.states[0].accept || m.states[0].accept
		for _, e := range m.states[0].edges {
			n.states[0].edges = append(n.states[0].edges, edge{e.label, e.to + shift})
		}
	}
	return n.trim()
}

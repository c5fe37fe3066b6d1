package lang

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Link is one part of a [Chain]: its language, and whether the part matters
// to what a string means (a counter key or a sequence value). Two splits of
// one string that give a marked part different spans are an ambiguity; a
// marked part must not accept the empty string.
type Link struct {
	NFA    *NFA
	Marked bool
}

// Chain is the concatenation of its links' languages: a template.
type Chain []Link

// Split gives, for each link of a chain, the span [start, end) it read of a
// witness, in rune positions of [Witness.Labels].
type Split [][2]int

// Witness is a string that two runs read differently. Labels[i] is the set
// of runes both runs accept at position i (any rune of it keeps both runs
// valid); Text is the string made of Labels' picked runes.
type Witness struct {
	Text   string
	Labels []Set
	A, B   Split
}

// ErrTooComplex is returned when the search would visit more states than
// its limit.
var ErrTooComplex = errors.New("lang: too many states to check")

// chain is a Chain with its states numbered globally.
type chain struct {
	links   []Link
	base    []int   // first global state of each link; base[len] is the end state
	part    []int   // the link of each global state
	mark    []int   // per link: marked boundaries crossed while reading it
	cl      [][]int // per global state: the states reachable without reading
	end     int     // the state after the last link
	startCl []int   // the states a run starts in
	// startCls has, per link, the states a run is in when the link is
	// about to start.
	startCls [][]int
}

func newChain(c Chain) *chain {
	ch := &chain{links: c, base: make([]int, len(c)+1), mark: make([]int, len(c))}
	total, crossed := 0, 0
	for i, l := range c {
		ch.base[i] = total
		total += l.NFA.Size()
		for range l.NFA.Size() {
			ch.part = append(ch.part, i)
		}
		if l.Marked {
			ch.mark[i] = crossed + 1 // entered, not yet left
			crossed += 2
		} else {
			ch.mark[i] = crossed
		}
	}
	ch.end = total
	ch.base[len(c)] = total
	ch.part = append(ch.part, len(c))
	// startCl[i]: the states a run is in when link i is about to start,
	// crossing links that accept the empty string.
	startCl := make([][]int, len(c)+1)
	startCl[len(c)] = []int{total}
	for i := len(c) - 1; i >= 0; i-- {
		s := []int{ch.base[i]}
		if c[i].NFA.Nullable() {
			s = append(s, startCl[i+1]...)
		}
		startCl[i] = s
	}
	ch.startCls = startCl
	ch.cl = make([][]int, total+1)
	for g := 0; g < total; g++ {
		i := ch.part[g]
		st := &c[i].NFA.states[g-ch.base[i]]
		var s []int
		if len(st.edges) > 0 {
			s = append(s, g)
		}
		if st.accept {
			s = append(s, startCl[i+1]...)
		}
		ch.cl[g] = s
	}
	ch.cl[total] = []int{total}
	ch.startCl = startCl[0]
	return ch
}

func (ch *chain) edges(g int) []edge {
	if g == ch.end {
		return nil
	}
	i := ch.part[g]
	return ch.links[i].NFA.states[g-ch.base[i]].edges
}

// Ambiguous looks for strings that a and b both accept with runs that give
// some marked link different spans (for a == b: two different readings of
// one template). Runs of two different chains are compared link by link in
// the order of their marked links; diverged says they differ from the start
// (the two chains' marked links mean different things), so that any common
// string is a witness.
//
// It returns up to max witnesses that split differently, shortest first,
// or none when there is no such string. It visits at most limit pairs of states, and returns
// ErrTooComplex (with the witnesses found so far) beyond.
func Ambiguous(a, b Chain, diverged bool, max, visits, limit int) ([]Witness, error) {
	ca, cb := newChain(a), newChain(b)
	type node struct {
		qa, qb int32
		div    bool
		parent int32
		ea, eb int16 // the edges read from the parent
	}
	var nodes []node
	seen := map[uint64]int{}
	key := func(qa, qb int, div bool) uint64 {
		k := uint64(qa)<<32 | uint64(qb)<<1
		if div {
			k |= 1
		}
		return k
	}
	push := func(qa, qb int, div bool, parent, ea, eb int) {
		k := key(qa, qb, div)
		if seen[k] >= visits {
			return
		}
		seen[k]++
		nodes = append(nodes, node{int32(qa), int32(qb), div, int32(parent), int16(ea), int16(eb)})
	}
	var found []Witness
	splits := map[string]bool{}
	witness := func(at int, ea, eb int) {
		// The path to node at, then the final read.
		type step struct{ qa, qb, ea, eb int }
		steps := []step{{int(nodes[at].qa), int(nodes[at].qb), ea, eb}}
		for n := at; nodes[n].parent >= 0; n = int(nodes[n].parent) {
			p := nodes[n].parent
			steps = append(steps, step{int(nodes[p].qa), int(nodes[p].qb), int(nodes[n].ea), int(nodes[n].eb)})
		}
		w := Witness{Labels: make([]Set, len(steps))}
		partsA, partsB := make([]int, len(steps)), make([]int, len(steps))
		var text []byte
		for i := range steps {
			s := steps[len(steps)-1-i]
			la, lb := ca.edges(s.qa)[s.ea].label, cb.edges(s.qb)[s.eb].label
			w.Labels[i] = la.And(lb)
			text = utf8.AppendRune(text, w.Labels[i].Pick())
			partsA[i], partsB[i] = ca.part[s.qa], cb.part[s.qb]
		}
		w.Text = string(text)
		w.A, w.B = spans(partsA, len(a)), spans(partsB, len(b))
		// Witnesses that split alike differ only in runes the caller
		// chooses anyway: keep the first.
		id := fmt.Sprint(w.A, w.B)
		if !splits[id] {
			splits[id] = true
			found = append(found, w)
		}
	}
	for _, qa := range ca.startCl {
		for _, qb := range cb.startCl {
			if qa == ca.end && qb == cb.end {
				if diverged {
					found = append(found, Witness{A: spans(nil, len(a)), B: spans(nil, len(b))})
				}
				continue
			}
			if qa == ca.end || qb == cb.end {
				continue // one run has finished, the other has not
			}
			push(qa, qb, diverged, -1, 0, 0)
		}
	}
	for at := 0; at < len(nodes) && len(found) < max; at++ {
		if len(nodes) > limit {
			return found, ErrTooComplex
		}
		n := nodes[at]
		qa, qb := int(n.qa), int(n.qb)
		div := n.div || ca.mark[ca.part[qa]] != cb.mark[cb.part[qb]]
		for ia, ea := range ca.edges(qa) {
			for ib, eb := range cb.edges(qb) {
				if !ea.label.Meets(eb.label) {
					continue
				}
				ta, tb := ca.base[ca.part[qa]]+ea.to, cb.base[cb.part[qb]]+eb.to
				for _, na := range ca.cl[ta] {
					for _, nb := range cb.cl[tb] {
						if na == ca.end && nb == cb.end {
							if div && len(found) < max {
								witness(at, ia, ib)
							}
							continue
						}
						if na == ca.end || nb == cb.end {
							continue // one run has finished, the other has not
						}
						push(na, nb, div, at, ia, ib)
					}
				}
			}
		}
	}
	return found, nil
}

// spans turns the link read at each position into a span per link; a link
// that read nothing gets an empty span where the run crossed it.
func spans(parts []int, links int) Split {
	sp := make(Split, links)
	for i := range sp {
		sp[i] = [2]int{-1, -1}
	}
	for pos, p := range parts {
		if sp[p][0] < 0 {
			sp[p][0] = pos
		}
		sp[p][1] = pos + 1
	}
	for i := range sp {
		if sp[i][0] >= 0 {
			continue
		}
		// Empty: just before the first position read by a later link.
		at := len(parts)
		for pos, p := range parts {
			if p > i {
				at = pos
				break
			}
		}
		sp[i] = [2]int{at, at}
	}
	return sp
}

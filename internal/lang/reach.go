package lang

import "unicode/utf8"

// Reach is what a chain can read of one string: which links can start at
// which byte positions and have the rest of the chain read the rest of the
// string. It is built in time linear in the string's length (times the
// chain's size), so that reading a number back never backtracks over the
// whole string from every position.
type Reach struct {
	ch    *chain
	s     string
	words int
	live  []uint64 // per byte position, a bitset of global states
}

// Reach reads s backwards with c.
func (c Chain) Reach(s string) *Reach {
	ch := newChain(c)
	words := (ch.end + 64) / 64
	r := &Reach{ch: ch, s: s, words: words, live: make([]uint64, words*(len(s)+1))}
	r.set(len(s), ch.end)
	for pos := len(s) - 1; pos >= 0; pos-- {
		if !utf8.RuneStart(s[pos]) {
			continue
		}
		ru, size := utf8.DecodeRuneInString(s[pos:])
		if ru == utf8.RuneError && size == 1 {
			continue
		}
		for q := 0; q < ch.end; q++ {
			for _, e := range ch.edges(q) {
				if !e.label.Has(ru) {
					continue
				}
				t := ch.base[ch.part[q]] + e.to
				for _, n := range ch.cl[t] {
					if r.has(pos+size, n) {
						r.set(pos, q)
						break
					}
				}
			}
		}
	}
	return r
}

func (r *Reach) set(pos, q int)      { r.live[pos*r.words+q/64] |= 1 << (q % 64) }
func (r *Reach) has(pos, q int) bool { return r.live[pos*r.words+q/64]&(1<<(q%64)) != 0 }

// Live reports whether link i can start at byte pos and the links from i
// on read s[pos:] exactly. Live(len(chain), len(s)) is true.
func (r *Reach) Live(i, pos int) bool {
	if pos < 0 || pos > len(r.s) {
		return false
	}
	if i >= len(r.ch.links) {
		return pos == len(r.s)
	}
	for _, q := range r.ch.startCls[i] {
		if r.has(pos, q) {
			return true
		}
	}
	return false
}

// Furthest reads s forwards with c and returns the furthest byte position
// at which a link could start, and the last such link (len(c) when the
// whole chain has been read there, with text left over).
func (c Chain) Furthest(s string) (link, pos int) {
	ch := newChain(c)
	cur := map[int]bool{}
	for _, q := range ch.startCl {
		cur[q] = true
	}
	link, pos = 0, 0
	for p := 0; len(cur) > 0; {
		for i := range ch.links {
			if cur[ch.base[i]] && (p > pos || i > link) {
				link, pos = i, p
			}
		}
		if cur[ch.end] && (p > pos || len(ch.links) > link) {
			link, pos = len(ch.links), p
		}
		if p >= len(s) {
			break
		}
		ru, size := utf8.DecodeRuneInString(s[p:])
		if ru == utf8.RuneError && size == 1 {
			break
		}
		next := map[int]bool{}
		for q := range cur {
			for _, e := range ch.edges(q) {
				if e.label.Has(ru) {
					for _, n := range ch.cl[ch.base[ch.part[q]]+e.to] {
						next[n] = true
					}
				}
			}
		}
		cur, p = next, p+size
	}
	return link, pos
}

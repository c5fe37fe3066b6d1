package sequence

import "math"

// Limiter is implemented by a [Gen] that reserves numbers ahead of their
// use, as a [Segment] does. Limit says that no number of the key base, or
// of a key made from it (base, "|", more; see sn's counter keys), is
// printed above max: the width of the template's part. A block then never
// takes more than 1/64 of what is left below max, so that a restart, which
// loses what is held unless it is handed back, never burns a narrow
// series. Of two limits of one base, the smaller holds.
type Limiter interface {
	Limit(base string, max int64)
}

// widthShare is the largest share of what is left of a series' width that
// one block takes: 1/widthShare.
const widthShare = 64

// Limit makes the blocks of base and of the keys made from it at most
// 1/64 of what is left below max (see [Limiter]).
func (s *Segment) Limit(base string, max int64) {
	if max <= 0 {
		return
	}
	for {
		old, loaded := s.limits.LoadOrStore(base, max)
		if !loaded || old.(int64) <= max || s.limits.CompareAndSwap(base, old, max) {
			return
		}
	}
}

// cap returns the most numbers key's next block may take: 1/64 of what is
// left below its limit, at least 1; math.MaxInt64 without a limit.
func (s *Segment) cap(key string, high int64) int64 {
	v, ok := s.limits.Load(keyBase(key))
	if !ok {
		return math.MaxInt64
	}
	left := v.(int64) - high
	return max(left/widthShare, 1)
}

// keyBase returns key up to its first "|" that is not escaped with "\".
func keyBase(key string) string {
	for i := 0; i < len(key); i++ {
		switch key[i] {
		case '\\':
			i++
		case '|':
			return key[:i]
		}
	}
	return key
}

// Limit passes the limit on to the Gen, when it is a [Limiter].
func (qd *Queued) Limit(base string, max int64) {
	if l, ok := qd.gen.(Limiter); ok {
		l.Limit(base, max)
	}
}

// Limit passes the limit on to each Gen that is a [Limiter], as its
// values' limit: max shifted right by the bits of the index.
func (b *Balanced) Limit(base string, max int64) {
	for _, g := range b.gens {
		if l, ok := g.(Limiter); ok {
			l.Limit(base, max>>b.shift)
		}
	}
}

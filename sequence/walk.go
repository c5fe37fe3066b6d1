package sequence

// Walk calls fn for g and then, depth first, for every Gen g draws from:
// the Gens of a [Balanced], the Gen of a [Queued], and those of any Gen
// with a method Unwrap() []Gen. Metrics and monitors use it to find the
// [Segment]s and leases under a template's sequence.
func Walk(g Gen, fn func(Gen)) {
	if g == nil {
		return
	}
	fn(g)
	if w, ok := g.(interface{ Unwrap() []Gen }); ok {
		for _, in := range w.Unwrap() {
			Walk(in, fn)
		}
	}
}

// Unwrap returns the Gens the Balanced draws from, in their order.
func (b *Balanced) Unwrap() []Gen { return append([]Gen(nil), b.gens...) }

// Unwrap returns the Gen the Queued draws from.
func (qd *Queued) Unwrap() []Gen { return []Gen{qd.gen} }

// Same reports whether a and b are one Gen: equal values of one type.
// Gens that cannot be compared (a struct holding a func, a map) are
// different, never a panic. Layers that see one Gen twice (a store shared
// by two templates) use it to handle it once.
func Same(a, b Gen) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

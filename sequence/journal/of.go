package journal

// Holder is implemented by a wrapper of a store that keeps journals
// (a Segment, a cache in front of a ledger): Journal returns the journals
// of what it wraps, with the wrapper's own checks, or nil when that keeps
// none. It is the one method a wrapper forwards for the journals, in
// place of a Keeper's.
type Holder interface {
	Journal() Keeper
}

// Of returns the journals of v: v itself if it is a [Keeper], what its
// Journal method returns if it is a [Holder], and nil otherwise.
func Of(v any) Keeper {
	switch x := v.(type) {
	case Keeper:
		return x
	case Holder:
		return x.Journal()
	}
	return nil
}

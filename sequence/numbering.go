package sequence

import "fmt"

// Numbering is implemented by a [Gen] whose numbers are not its store's
// counters one to one: a snowflake Gen's time-ordered ids, a [Balanced]'s
// interleaving of its Gens' values. Numbering describes how it numbers
// ("snowflake 41/10/12 from 2014-09-01", "balanced 4"). A template's entry
// in a catalog records it: templates whose sequences number alike may
// share counters; others must print disjoint numbers, as templates on two
// stores must.
type Numbering interface {
	Numbering() string
}

// Numbering returns "balanced N", N its Gens: a number is a Gen's value
// shifted left, with the Gen's index in the low bits.
func (b *Balanced) Numbering() string { return fmt.Sprintf("balanced %d", len(b.gens)) }

// Continuous is implemented by a [Gen] that issues every number of a
// key, in order, without a gap: one at a time, each in the caller's
// transaction or held and then committed or voided, never from a block
// (sqlseq's Gapless). Continuous reports whether it does. sn's legal
// profiles that demand an unbroken series accept only such a Gen.
type Continuous interface {
	Continuous() bool
}

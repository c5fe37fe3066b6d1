package sequence

import (
	"context"
	"fmt"
	"time"
)

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

// A Transactor is a [Gen] that draws its numbers inside a transaction of
// its store, which commits them with the caller's own work or rolls them
// back with it (sqlseq's Gapless). Transact runs fn with a context that
// carries a new transaction of the store, and commits it when fn returns
// nil, or rolls it back when fn returns an error or panics. A ctx that
// already carries a transaction of the store is used as it is: fn runs
// in it, and the caller commits. Everything the Gen does for fn in that
// context (a draw, a hold, the journal, an idempotency key's claim) is
// in the one transaction.
//
// A server that issues such numbers for a request, where no caller has a
// transaction of its own, runs the request in Transact: its numbers are
// committed once the request has them all, and none when it fails.
type Transactor interface {
	Gen
	Transact(ctx context.Context, fn func(ctx context.Context) error) error
}

// Hold is a number reserved for a document that becomes final later: a
// [Holder]'s Hold takes number N of Key at once, and it must be
// committed or voided by Deadline; one neither committed nor voided by
// then is not lost: an audit of the journal reports it as lapsed until
// someone does.
type Hold struct {
	Key      string
	N        int64
	Deadline time.Time
}

// A Holder is a [Continuous] Gen that holds numbers outside a
// transaction (sqlseq's Gapless): Hold takes key's next number and
// records it held until now plus ttl; Commit makes a held number final;
// VoidHold voids a held number, with the reason and who voids it (actor,
// "" for nobody named), when its document was abandoned. Commit and
// VoidHold of a number that is not held (committed or voided already,
// never held) return an error wrapping ErrInvalidArgument and record
// nothing. Each is one transaction of the store, or runs in the
// context's ([Transactor]).
type Holder interface {
	Gen
	Hold(ctx context.Context, key string, ttl time.Duration) (Hold, error)
	Commit(ctx context.Context, key string, n int64) error
	VoidHold(ctx context.Context, key string, n int64, reason, actor string) error
}

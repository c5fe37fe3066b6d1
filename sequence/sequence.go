// Package sequence defines where the numbers in a business number come from.
//
// The core interface is [Gen], one method that returns the next number for a
// counter key. [Allocator] reserves blocks of consecutive numbers in a store;
// [Segment] turns any Allocator into a Gen that serves almost every number from
// memory. Backends live in their own packages (boltseq, redisseq), so a program
// that uses only [Memory] never links a database client.
//
// Extra powers of numbering are small optional interfaces discovered by
// type assertion, in the manner of database/sql/driver: [Batcher],
// [Binder], [Floorer], [Returner], [Expirer], [Releaser], [Limiter],
// [Numbering], [Continuous], [Pinger] and io.Closer. Callers that find them get
// faster or more capable; callers that do not fall back to [Gen.Next].
// Wrappers ([Segment], [Queued], [Balanced]) pass them on to what they
// wrap, or answer errors.ErrUnsupported.
//
// Everything else a store promises is written once, above two things it
// gives: its records (package record), versioned values written under
// conditions, and, for a store that keeps them, its journals (package
// journal). A wrapper forwards those as one method each: Records
// ([record.Holder]) and Journal ([journal.Holder]). On the records stand
// the catalog of series (package catalog), idempotency claims (package
// claim), worker-id leases, named records ([Remember]), the store's
// identity and the clock sn guards expiring counters by. A journal keeps,
// per key, every block reserved, handed back, released, every number
// voided, every floor, one record per block, hash-chained, so that
// [journal.Audit] can say what became of every number and
// [journal.VerifyChain] that nobody edited the record.
//
// Every implementation in this module passes the conformance suite in
// package sequencetest, and so should yours.
package sequence

import (
	"context"
	"errors"

	"github.com/sngen/sn/sequence/journal"
)

// Gen issues numbers. Next returns a number for key that this Gen (and every
// other Gen sharing its store) has never returned for that key before. Numbers
// are positive. Gaps are allowed; repeats never are.
//
// Implementations must be safe for concurrent use and must honour ctx: a call
// that would wait — for a store, a lock, the network — returns ctx.Err()
// (possibly wrapped) once ctx is done. A call that takes a number from
// memory need not consult ctx, and may return the number whatever ctx
// says: the warm path of a Segment is one atomic add.
type Gen interface {
	Next(ctx context.Context, key string) (int64, error)
}

// Allocator reserves blocks of numbers in a store. Allocate reserves n >= 1
// consecutive numbers for key that no earlier call (from any process sharing
// the store) has reserved, and returns them as a [Range] of length n.
//
// Implementations must be safe for concurrent use.
type Allocator interface {
	Allocate(ctx context.Context, key string, n int64) (Range, error)
}

// Range is an inclusive block of numbers [First, Last]. It is the Range
// of package journal, whose records are about the blocks reserved.
type Range = journal.Range

// Batcher is implemented by a [Gen] that can issue several numbers at once
// more cheaply than by repeated calls to Next. NextN appends n numbers for
// key to dst and returns the extended slice. The numbers obey the same rules
// as Next; they need not be consecutive. On error, dst is returned with the
// numbers already issued appended; those numbers are consumed. NextN must
// not keep dst after it returns: callers reuse it.
type Batcher interface {
	NextN(ctx context.Context, key string, dst []int64, n int) ([]int64, error)
}

// Handle issues numbers for one key fixed in advance. See [Binder].
type Handle interface {
	Next(ctx context.Context) (int64, error)
}

// Binder is implemented by a [Gen] that can skip its per-key lookup when the
// key is known in advance. The numbers from a Handle and from Gen.Next with
// the same key come from one counter.
type Binder interface {
	Bind(key string) Handle
}

// Floorer is implemented by a [Gen] or [Allocator] that can raise a key's
// floor. After Floor returns nil, every number issued for key is greater
// than floor. A floor at or below what was already issued or reserved is a
// no-op: a floor never lowers a counter. It exists for migrations ("start
// above the largest order number the old system issued"). A wrapper whose
// store cannot take a floor (a Segment over an Allocator that is not a
// Floorer) returns an error wrapping errors.ErrUnsupported.
type Floorer interface {
	Floor(ctx context.Context, key string, floor int64) error
}

// Returner is implemented by an [Allocator] that can take back the top of
// what it reserved. Return lowers key's high-water mark from r.Last to
// r.First-1 when r.Last is the mark still, that is when no process has
// reserved a number for key since r; it reports whether it did. The
// numbers of r are reserved again by a later Allocate, so the caller must
// own every number of r and have issued none: it returns the unused end of
// a range it reserved, once. (The store compares the mark only: it cannot
// tell a range returned and reserved again by another from the first.) A
// store that is a [Floorer] remembers the floors raised, and takes back
// nothing at or below one: a floor at or below the mark, raised while a
// block was held, is not undone when the block is returned. A [Segment] returns, at Close, what it holds of
// its current and prefetched blocks, so that a restart costs no gap.
type Returner interface {
	Return(ctx context.Context, key string, r Range) (bool, error)
}

// Releaser is implemented by a [Gen] that holds per-key state in memory.
// Release drops the state of key: numbers it holds for the key are a gap,
// never issued, and the next call for the key starts from the store. sn
// calls it for the key of a reset= counter's past period when the period
// turns, so that a counter per day does not hold a day's state for ever.
type Releaser interface {
	Release(key string)
}

var (
	// ErrUnavailable means the store cannot be reached and no buffered
	// number is left. The error returned wraps both ErrUnavailable and the
	// store's own error. Retrying later may succeed.
	ErrUnavailable = errors.New("sequence: unavailable")

	// ErrRegressed means the store returned a block at or below a number
	// already issued for the key, or refused a counter that stands below
	// its journal's mark (journal.ErrBehind): the store has lost data.
	// Issuing from such a block would repeat numbers, so nothing is issued
	// from it. Raise the key's floor in the store above the last number
	// issued to recover.
	ErrRegressed = errors.New("sequence: store went backwards")

	// ErrExhausted means a key has no numbers left below math.MaxInt64.
	ErrExhausted = errors.New("sequence: key exhausted")

	// ErrClosed is returned by a Gen or Allocator used after Close.
	ErrClosed = errors.New("sequence: closed")

	// ErrInvalidArgument is returned for a bad n, floor or key, and for
	// a journal record a store does not take: it is [journal.ErrInvalid].
	ErrInvalidArgument = journal.ErrInvalid

	// ErrClockRollback means the clock went back further than a
	// time-based Gen waits out: issuing at the earlier time could repeat
	// an id, so nothing is issued until the clock has caught up.
	ErrClockRollback = errors.New("sequence: clock went back")

	// ErrLeaseLost means a Gen's lease on its worker id ended, or could not
	// be renewed in time: another process may hold the id now, so the Gen
	// issues nothing more.
	ErrLeaseLost = errors.New("sequence: lease lost")
)

package sn

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// A Request says what one call that issues numbers asks for. The zero
// Request asks for one number, at the clock's instant, with no variables.
type Request struct {
	// N is how many numbers to issue, at most [MaxN]; 0 means one. The
	// numbers share one reading of the clock, and a sequence that supports
	// batches (sequence.Batcher) is asked for them at once. A template
	// with two sequence parts on one counter (@<seq>.@<seq>) draws the
	// first part's N values, then the second's: its batch prints other
	// pairs than N calls of one number would, each value still once.
	N int

	// At is the instant the numbers are for instead of the clock's: pass a
	// document's own date (its posting date) so that the number's date
	// and reset period follow the document. The zero At means the clock,
	// read once per call and only when the template prints the date or
	// resets its counter.
	At time.Time

	// Vars are the per-call variables, the values of "@<NAME>" parts.
	Vars Vars

	// IdempotencyKey, when not empty, makes the call safe to repeat: a
	// call of the same series (however the template is spelt: a widening
	// the catalog continues is the same series) with the same key, within
	// [IdempotencyWindow], from any process sharing the store, returns
	// the numbers the first call was given instead of new ones. A caller
	// that did not hear back (a timeout, a cut connection) asks again
	// with the same key. The key used with another request (N, At or
	// Vars), through another entry of the series ([WithName]), or by
	// another caller ([WithActor]; sn serve's token), is refused with
	// [ErrIdempotencyConflict]; while the first
	// call is under way, others get [ErrInProgress]. At most 255 bytes.
	// The keys are kept in the store, for every process that shares it,
	// when it remembers them (its records, see [claim.Records]: bbolt, the SQL
	// ledger, etcd, Redis with or without a ledger, timed by the store's
	// clock; snowflake ids, in their workers' lease store); otherwise in
	// the Generator, for this process only
	// ([Generator.SharedIdempotency] says which; sn serve refuses keyed
	// requests then).
	// Give At for
	// a template that prints the date or resets its counter, so that a
	// retry past midnight is the same request.
	IdempotencyKey string
}

// count returns how many numbers r asks for, or an error wrapping
// ErrTooMany.
func (r *Request) count() (int, error) {
	switch {
	case r.N == 0:
		return 1, nil
	case r.N < 0 || r.N > MaxN:
		return 0, fmt.Errorf("%w: %d numbers asked for; one request gives 1 to %d (0 means 1)", ErrTooMany, r.N, MaxN)
	}
	return r.N, nil
}

// A Batch holds numbers one after another in one buffer, as
// [Generator.Append] appends them. A Batch kept and reused, after
// [Batch.Reset], issues without allocating once its buffer has grown to
// the size of a call. The zero Batch is empty and ready to use. A Batch
// is not safe for concurrent use.
type Batch struct {
	buf  []byte
	ends []int // number i is buf[ends[i-1]:ends[i]]
	// refused is what draw returns, drawing nothing: a request refused
	// before the Generator (Refuse).
	refused error
}

// Len returns how many numbers b holds.
func (b *Batch) Len() int { return len(b.ends) }

// Bytes returns number i of b, 0 <= i < b.Len(). The bytes are b's own:
// valid until b is reset, and not to be changed.
func (b *Batch) Bytes(i int) []byte {
	start := 0
	if i > 0 {
		start = b.ends[i-1]
	}
	return b.buf[start:b.ends[i]:b.ends[i]]
}

// Strings returns b's numbers as strings, allocating two values however
// many numbers b holds: a string of all of them and the slice.
func (b *Batch) Strings() []string {
	if len(b.ends) == 0 {
		return nil
	}
	all := string(b.buf[:b.ends[len(b.ends)-1]])
	out := make([]string, len(b.ends))
	start := 0
	for i, end := range b.ends {
		out[i] = all[start:end]
		start = end
	}
	return out
}

// Reset empties b, keeping its buffers for the next call.
func (b *Batch) Reset() { b.buf, b.ends = b.buf[:0], b.ends[:0] }

// truncate drops the numbers after the first n.
func (b *Batch) truncate(n int) {
	if n >= len(b.ends) {
		return
	}
	end := 0
	if n > 0 {
		end = b.ends[n-1]
	}
	b.buf, b.ends = b.buf[:end], b.ends[:n]
}

// batches are the Batches of Next and Issue. A Batch larger than 1 MiB is
// not kept.
var batches = sync.Pool{New: func() any { return new(Batch) }}

// getBatch returns a Batch with room for n numbers, grown at once: g's
// spare, else one from the pool. The spare is not the pool's to drop (the
// race detector makes the pool drop a quarter of what it is given), so a
// Generator called from one goroutine at a time reuses one Batch.
func (g *Generator) getBatch(n int) *Batch {
	b := g.spare.Swap(nil)
	if b == nil {
		b = batches.Get().(*Batch)
	}
	b.buf = slices.Grow(b.buf, n*g.plan.BufSize())
	b.ends = slices.Grow(b.ends, n)
	return b
}

// putBatch keeps b as g's spare, or gives it to the pool. A Batch larger
// than 1 MiB is not kept.
func (g *Generator) putBatch(b *Batch) {
	if cap(b.buf) > 1<<20 {
		return
	}
	b.Reset()
	if !g.spare.CompareAndSwap(nil, b) {
		batches.Put(b)
	}
}

package sn

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sngen/sn/internal/batchjson"
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
	// when it remembers them (its records, see [sequence.Claims]: bbolt, the SQL
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

// Next returns the next number: [Generator.Issue] of the zero [Request].
func (g *Generator) Next(ctx context.Context) (string, error) {
	if !g.wrapped {
		// What draw does for one number, printed straight into the
		// string's own bytes.
		s, err := g.plan.Next(ctx, time.Time{}, nil)
		return s, callError(err)
	}
	b := g.getBatch(1)
	defer g.putBatch(b)
	if err := g.call(ctx, b, Request{}); err != nil {
		return "", err
	}
	return string(b.Bytes(0)), nil
}

// Issue issues the numbers r asks for. It checks the request — the count,
// the instant, the variables — before drawing any number: a count above
// [MaxN] is an error wrapping [ErrTooMany]; an instant a date part cannot
// print (a year outside 0000-9999, or outside a yy date's window), one
// wrapping [ErrInstant]; a missing or bad variable, [ErrVarMissing] or
// [ErrVarInvalid]. On an error after that, the numbers issued so far are
// returned with it.
func (g *Generator) Issue(ctx context.Context, r Request) ([]string, error) {
	if g.clockOnly && !r.At.IsZero() {
		return nil, clockOnlyError()
	}
	if r.IdempotencyKey != "" {
		return g.replay(ctx, r)
	}
	if !g.wrapped {
		// What draw does, with the numbers printed straight into the
		// strings' one buffer.
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		if n == 1 {
			s, err := g.plan.Next(ctx, r.At, r.Vars)
			if err != nil {
				return nil, callError(err)
			}
			return []string{s}, nil
		}
		nums, err := g.plan.NextN(ctx, n, r.At, r.Vars)
		return nums, callError(err)
	}
	b := g.getBatch(min(max(r.N, 1), MaxN))
	defer g.putBatch(b)
	err := g.call(ctx, b, r)
	return b.Strings(), err
}

// Append is [Generator.Issue] for a caller that keeps a [Batch]: it
// appends the numbers r asks for to b. With room in b, it allocates
// nothing. On error, the numbers issued so far stay appended.
func (g *Generator) Append(ctx context.Context, b *Batch, r Request) error {
	if g.clockOnly && !r.At.IsZero() {
		return clockOnlyError()
	}
	if r.IdempotencyKey != "" {
		nums, err := g.replay(ctx, r)
		for _, s := range nums {
			b.buf = append(b.buf, s...)
			b.ends = append(b.ends, len(b.buf))
		}
		return err
	}
	return g.call(ctx, b, r)
}

// AppendJSON is [Generator.Append] for a writer of JSON: it appends the
// numbers r asks for to dst as JSON strings separated by commas, "A","B"
// (the list without its brackets), and returns dst and how many numbers
// it appended. The numbers are printed into the JSON as they are made,
// with no copy and, for most templates, no test of their bytes: a number
// holding a byte JSON escapes is escaped. With room in dst, it allocates
// nothing. On error, the numbers issued so far stay appended. Like a
// failed append, it may leave bytes in dst's capacity past the length it
// returns (a comma it dropped, a number refused): only dst[:len] is the
// answer.
func (g *Generator) AppendJSON(ctx context.Context, dst []byte, r Request) ([]byte, int, error) {
	if g.wrapped || r.IdempotencyKey != "" {
		b := g.getBatch(min(max(r.N, 1), MaxN))
		defer g.putBatch(b)
		err := g.Append(ctx, b, r)
		return batchjson.AppendList(dst, b.buf, b.ends), b.Len(), err
	}
	if g.clockOnly && !r.At.IsZero() {
		return dst, 0, clockOnlyError()
	}
	n, err := r.count()
	if err != nil {
		return dst, 0, err
	}
	dst, got, err := g.plan.AppendNextJSON(ctx, dst, n, r.At, r.Vars)
	return dst, got, callError(err)
}

// Preview returns the sample numbers r asks for without drawing from any
// sequence and without running the middleware: the sequences print 1, 2,
// ... N. Variables not given print as their name in braces; those given
// are checked as by [Generator.Issue].
func (g *Generator) Preview(ctx context.Context, r Request) ([]string, error) {
	n, err := r.count()
	if err != nil {
		return nil, err
	}
	nums, err := g.plan.Preview(ctx, n, r.At, r.Vars)
	return nums, callError(err)
}

// call runs r through g's middleware into b.
//
// With middleware, the request is checked before it, and what it returns
// after: a call that succeeds has issued exactly the numbers asked for.
func (g *Generator) call(ctx context.Context, b *Batch, r Request) (err error) {
	if !g.wrapped {
		return g.draw(ctx, b, r)
	}
	count, err := r.count()
	if err != nil {
		return err
	}
	n := b.Len()
	defer func() {
		if v := recover(); v != nil {
			b.truncate(n)
			err = fmt.Errorf("%w: a middleware panicked: %v", ErrPanic, v)
		}
	}()
	if err := g.issue(ctx, b, r); err != nil {
		return err
	}
	if got := b.Len() - n; got != count {
		b.truncate(n) // a gap
		return fmt.Errorf("sn: a middleware of %s issued %d numbers for a request of %d", g.plan.String(), got, count)
	}
	return nil
}

// draw is the IssueFunc the middleware wraps: it draws r's numbers from
// the template's sequences and prints them into b.
func (g *Generator) draw(ctx context.Context, b *Batch, r Request) error {
	n, err := r.count()
	if err != nil {
		return err
	}
	if n == 1 {
		start := len(b.buf)
		b.buf, err = g.plan.AppendNext(ctx, b.buf, r.At, r.Vars)
		if err != nil {
			b.buf = b.buf[:start]
			return callError(err)
		}
		b.ends = append(b.ends, len(b.buf))
		return nil
	}
	b.buf, b.ends, err = g.plan.AppendNextN(ctx, b.buf, b.ends, n, r.At, r.Vars)
	return callError(err)
}

package sn

import (
	"context"
	"time"

	"github.com/sngen/sn/internal/batchjson"
)

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
	if !g.wrapped && r.IdempotencyKey == "" {
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

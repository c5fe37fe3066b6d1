package sn

import "context"

// draw is the last IssueFunc of a Generator's chain, inside the
// middleware: it draws r's numbers from
// the template's sequences and prints them into b.
func (g *Generator) draw(ctx context.Context, b *Batch, r Request) error {
	if b.refused != nil {
		return b.refused
	}
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

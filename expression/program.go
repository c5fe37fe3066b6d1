package expression

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
	"unsafe"
)

// Part is one compiled part of a template, as given to [NewProgram].
type Part struct {
	// Name is the part's name in the template ("seq", "date", a variable),
	// used in error messages.
	Name string
	// Offset is the byte offset of the part in the template.
	Offset int
	// Expr computes the part.
	Expr Expression
	// Static marks literal text: it depends on nothing, so the Program may
	// evaluate it at any point.
	Static bool
}

// ErrPanic is wrapped by the error a [Program] returns when an expression or
// a sequence panics.
var ErrPanic = errors.New("panic")

// PartError is an error from one part of a number, naming the part and its
// position in the template.
type PartError struct {
	Name   string
	Offset int
	Err    error
}

func (e *PartError) Error() string {
	return fmt.Sprintf("%s at offset %d: %v", e.Name, e.Offset, e.Err)
}

// Unwrap returns the part's own error.
func (e *PartError) Unwrap() error { return e.Err }

// Program evaluates the parts of a template: by [Order], then template
// position, and assembles their text in template position. It recovers a
// panic in a part and returns it as an error naming the part. A Program is
// immutable and safe for concurrent use; it reuses its buffers through a
// sync.Pool so that rendering allocates nothing but the result.
type Program struct {
	parts   []Part
	order   []int // evaluation order: indexes into parts
	inOrder bool  // order is 0, 1, 2, ...: the buffer is the output
	plan    []op  // when inOrder: the parts with adjacent literals merged
	static  []kv  // variables set by constant setters, set for every call
	maxLen  int   // longest output, -1 when unbounded
	direct  bool  // inOrder, and every part is built in: see renderDirect
	clock   func() time.Time
	key     string
	// ownerPrinted: the template prints ownerKey, so it may be the key.
	ownerPrinted bool
	pool         sync.Pool
}

type span struct{ start, end int }

// op is one step of a plan: append lit, or evaluate parts[part].
type op struct {
	lit  string
	expr Expression
	part int
}

type state struct {
	c       Context
	buf     []byte
	spans   []span
	scratch []byte
	out     []byte
}

// NewProgram returns a Program over parts. key is the template's default
// counter key, returned by [Context.Key] when no ownerKey is set. clock is
// read when a call gives no instant; nil means time.Now.
func NewProgram(parts []Part, key string, clock func() time.Time) *Program {
	if clock == nil {
		clock = time.Now
	}
	p := &Program{parts: parts, key: key, clock: clock}
	for _, pt := range parts {
		if n := pt.Expr.MaxLen(); n < 0 || p.maxLen < 0 {
			p.maxLen = -1
		} else {
			p.maxLen += n
		}
	}
	for _, pt := range parts {
		switch e := pt.Expr.(type) {
		case *Setter:
			p.ownerPrinted = p.ownerPrinted || e.Name == OwnerKey
			p.static = append(p.static, kv{e.Name, e.Value})
		case *Var:
			p.ownerPrinted = p.ownerPrinted || e.Name == OwnerKey
		}
	}
	// Static text takes the Order of the part before it, so that the usual
	// templates evaluate in position order and need no reassembly.
	orders := make([]Order, len(parts))
	prev := Before
	for i, pt := range parts {
		if !pt.Static {
			prev = pt.Expr.Order()
		}
		orders[i] = prev
	}
	p.order = make([]int, len(parts))
	for i := range p.order {
		p.order[i] = i
	}
	sort.SliceStable(p.order, func(a, b int) bool { return orders[p.order[a]] < orders[p.order[b]] })
	p.inOrder = true
	for i, j := range p.order {
		if i != j {
			p.inOrder = false
		}
	}
	if p.inOrder {
		p.direct = true
		for i, pt := range parts {
			lit, isLit := literal(pt)
			switch {
			case isLit && len(p.plan) > 0 && p.plan[len(p.plan)-1].expr == nil:
				p.plan[len(p.plan)-1].lit += lit
			case isLit:
				p.plan = append(p.plan, op{lit: lit, part: i})
			default:
				p.plan = append(p.plan, op{expr: pt.Expr, part: i})
				switch pt.Expr.(type) {
				case *Seq, *Checksum, *Date, *Var, *Random:
				default:
					p.direct = false
				}
			}
		}
	}
	p.pool.New = func() any {
		st := &state{spans: make([]span, len(parts)), buf: make([]byte, 0, 64)}
		st.c.st = st
		st.c.prog = p
		return st
	}
	return p
}

// literal returns the constant text of a part that needs no evaluation:
// literal text and setters (whose variables the Program sets up front).
func literal(pt Part) (string, bool) {
	switch e := pt.Expr.(type) {
	case Text:
		return string(e), true
	case *Setter:
		return e.Value, true
	}
	return "", false
}

// Parts returns the parts in template position. The slice must not be
// modified.
func (p *Program) Parts() []Part { return p.parts }

// Order returns the evaluation order as indexes into Parts.
func (p *Program) Order() []int { return append([]int(nil), p.order...) }

// Now reads the Program's clock, for a caller that wants one instant for
// several numbers (see [Program.RenderN]).
func (p *Program) Now() time.Time { return p.clock() }

// Key returns the default counter key given to NewProgram.
func (p *Program) Key() string { return p.key }

// Call is one rendering request.
type Call struct {
	// At is the instant of the number. When it is zero, the Program's
	// clock is read, at most once per number and only if a part asks for
	// the time.
	At time.Time
	// Vars are the per-call variables; they are read, never modified.
	Vars map[string]string
	// Preview renders sample numbers without drawing from any sequence;
	// Sample is the sample sequence value.
	Preview bool
	Sample  int64
}

func (p *Program) get(ctx context.Context, call *Call) *state {
	st := p.pool.Get().(*state)
	c := &st.c
	c.ctx, c.now, c.vars = ctx, call.At, call.Vars
	c.mode = modeRender
	if call.Preview {
		c.mode, c.sample = modePreview, call.Sample
	}
	return st
}

func (p *Program) put(st *state) {
	c := &st.c
	if c.vars != nil {
		c.vars = nil
	}
	c.set = c.set[:0]
	c.resetSeq()
	if b := &c.batch; b.want != 0 || b.seq != nil || len(b.nums) != 0 {
		*b = batch{nums: b.nums[:0]}
	}
	if cap(st.buf) > 4096 { // do not keep huge buffers alive
		st.buf = make([]byte, 0, 64)
	}
	p.pool.Put(st)
}

// renderDirect renders a template whose parts are all built in and
// evaluated in template order, calling their methods directly rather than
// through the Expression interface. That lets the Context live on the
// stack: no pool, no shared state, and the only allocation is the buffer
// that becomes the returned string.
func (p *Program) renderDirect(ctx context.Context, call *Call) (s string, err error) {
	var c Context
	c.ctx, c.now, c.vars, c.prog = ctx, call.At, call.Vars, p
	defer p.recoverDirect(&c, &err)
	size := p.maxLen
	if size <= 0 || size > 256 {
		size = 64
	}
	buf := make([]byte, 0, size)
	for i := range p.plan {
		o := &p.plan[i]
		if o.expr == nil {
			buf = append(buf, o.lit...)
			continue
		}
		c.cur, c.out = o.part, buf
		switch e := o.expr.(type) {
		case *Seq:
			buf, err = e.Append(buf, &c)
		case *Checksum:
			buf, err = e.Append(buf, &c)
		case *Date:
			buf, err = e.Append(buf, &c)
		case *Var:
			buf, err = e.Append(buf, &c)
		case *Random:
			buf, err = e.Append(buf, &c)
		}
		if err != nil {
			pt := p.parts[o.part]
			return "", &PartError{Name: pt.Name, Offset: pt.Offset, Err: err}
		}
	}
	if len(buf) == 0 {
		return "", nil
	}
	return unsafe.String(&buf[0], len(buf)), nil
}

func (p *Program) recoverDirect(c *Context, err *error) {
	if r := recover(); r != nil {
		pt := p.parts[c.cur]
		*err = &PartError{Name: pt.Name, Offset: pt.Offset, Err: fmt.Errorf("%w: %v", ErrPanic, r)}
	}
}

// finish turns a panic in a part into an error naming the part, and returns
// st to the pool. It is deferred by every rendering method.
func (p *Program) finish(st *state, err *error) {
	if r := recover(); r != nil {
		pt := p.parts[st.c.cur]
		*err = &PartError{Name: pt.Name, Offset: pt.Offset, Err: fmt.Errorf("%w: %v", ErrPanic, r)}
	}
	p.put(st)
}

// Render returns the number for call.
func (p *Program) Render(ctx context.Context, call *Call) (s string, err error) {
	if p.direct && !call.Preview {
		return p.renderDirect(ctx, call)
	}
	st := p.get(ctx, call)
	defer p.finish(st, &err)
	out, err := p.run(st)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// AppendRender appends the number for call to dst.
func (p *Program) AppendRender(dst []byte, ctx context.Context, call *Call) (out []byte, err error) {
	st := p.get(ctx, call)
	defer p.finish(st, &err)
	b, err := p.run(st)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// RenderN appends n numbers for call to dst. They share the call's instant
// and variables; a sequence that implements sequence.Batcher is asked for
// its numbers in one batch. On error, the numbers rendered so far are
// returned with it.
func (p *Program) RenderN(dst []string, ctx context.Context, call *Call, n int) (out []string, err error) {
	st := p.get(ctx, call)
	defer p.finish(st, &err)
	for i := 0; i < n; i++ {
		st.c.batch.want = n - i
		st.c.set = st.c.set[:0]
		st.c.resetSeq()
		if call.Preview {
			st.c.sample = call.Sample + int64(i)
		}
		out, err := p.run(st)
		if err != nil {
			return dst, err
		}
		dst = append(dst, string(out))
	}
	return dst, nil
}

// run evaluates every part into st.buf and returns the assembled output,
// valid until st is reused. A panic is recovered by the caller's finish.
func (p *Program) run(st *state) ([]byte, error) {
	c := &st.c
	st.buf = st.buf[:0]
	if p.inOrder {
		// The common case: evaluation order is template order, so the
		// buffer is the output and Printed is the buffer so far.
		for i := range p.plan {
			o := &p.plan[i]
			if o.expr == nil {
				st.buf = append(st.buf, o.lit...)
				continue
			}
			c.cur = o.part
			b, err := o.expr.Append(st.buf, c)
			if err != nil {
				pt := p.parts[o.part]
				return nil, &PartError{Name: pt.Name, Offset: pt.Offset, Err: err}
			}
			if cap(b) == cap(st.buf) && len(b) > 0 && len(st.buf) > 0 && &b[0] == &st.buf[0] {
				st.buf = st.buf[:len(b)] // same array: store the length only
			} else {
				st.buf = b
			}
		}
		return st.buf, nil
	}
	for i := range st.spans {
		st.spans[i] = span{-1, -1}
	}
	for _, i := range p.order {
		c.cur = i
		start := len(st.buf)
		b, err := p.parts[i].Expr.Append(st.buf, c)
		if err != nil {
			pt := p.parts[i]
			return nil, &PartError{Name: pt.Name, Offset: pt.Offset, Err: err}
		}
		st.buf = b
		st.spans[i] = span{start, len(b)}
	}
	st.out = st.out[:0]
	for _, sp := range st.spans {
		st.out = append(st.out, st.buf[sp.start:sp.end]...)
	}
	return st.out, nil
}

// printedBefore assembles the text of the evaluated parts before part cur.
func (st *state) printedBefore(p *Program, cur int) []byte {
	st.scratch = st.scratch[:0]
	for i := 0; i < cur; i++ {
		if sp := st.spans[i]; sp.start >= 0 {
			st.scratch = append(st.scratch, st.buf[sp.start:sp.end]...)
		}
	}
	return st.scratch
}

// Check checks a number parsed back: text is the number and spans[i] the
// byte range [start, end) matched for part i. Variable parts make their text
// available through [Context.Var], the sequence part through [Context.Seq]
// and [Context.SeqText]; then every part that implements [Checker] checks
// its text, in template position. The error is a [*PartError].
func (p *Program) Check(ctx context.Context, text string, spans [][2]int) (err error) {
	c := &Context{ctx: ctx, prog: p, mode: modeCheck, text: text, spans: make([]span, len(spans))}
	for i, s := range spans {
		c.spans[i] = span{s[0], s[1]}
	}
	defer func() {
		if r := recover(); r != nil {
			pt := p.parts[c.cur]
			err = &PartError{Name: pt.Name, Offset: pt.Offset, Err: fmt.Errorf("%w: %v", ErrPanic, r)}
		}
	}()
	for i, pt := range p.parts {
		c.cur = i
		part := text[c.spans[i].start:c.spans[i].end]
		if r, ok := pt.Expr.(interface{ readBack(string, *Context) }); ok {
			r.readBack(part, c)
		}
	}
	for i, pt := range p.parts {
		c.cur = i
		ch, ok := pt.Expr.(Checker)
		if !ok {
			continue
		}
		if err := ch.Check(text[c.spans[i].start:c.spans[i].end], c); err != nil {
			return &PartError{Name: pt.Name, Offset: pt.Offset, Err: err}
		}
	}
	return nil
}

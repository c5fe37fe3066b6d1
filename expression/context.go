package expression

import (
	"context"
	"time"

	"github.com/sngen/sn/internal/host"
)

// Context is what the parts of one number share while it is built or read
// back: the instant, the variables, the sequence value and the text printed
// so far. A Context belongs to one call on one goroutine; an expression
// must not keep it after Append or Check returns. sn builds Contexts;
// [NewContext] builds one for testing an Expression on its own.
type Context struct {
	h host.Host
}

func init() {
	host.Wrap = func(h host.Host) any { return &Context{h} }
}

// Context returns the context.Context of the call.
func (c *Context) Context() context.Context { return c.h.Context() }

// Time returns the instant of the call: the instant the caller passed, or
// the clock, read once per call. Every part of one number sees the same
// instant.
func (c *Context) Time() time.Time { return c.h.Time() }

// Var returns variable name: the value a setter in the template gives it
// ("@<ownerKey, value=SN>") or else the per-call value. When a number is
// read back, it is the text read for the variable's part.
func (c *Context) Var(name string) (string, bool) { return c.h.Var(name) }

// Seq returns the sequence value of the number (of its last sequence part,
// when it has several). Sequences are drawn before any expression runs.
func (c *Context) Seq() (int64, bool) {
	n, _, ok := c.h.Seq()
	return n, ok
}

// SeqText returns the sequence value exactly as printed, padding included,
// or nil when there is none. The slice is valid until the call returns and
// must not be modified.
func (c *Context) SeqText() []byte {
	_, t, _ := c.h.Seq()
	return t
}

// Printed returns the text printed by the parts before the current one, in
// template position. It is complete for [After] parts; for earlier Orders it
// holds only the parts evaluated so far. The slice is valid until the
// current part returns and must not be modified.
func (c *Context) Printed() []byte { return c.h.Printed() }

// Preview reports whether the number is being rendered for a preview, in
// which case sequences print sample values and nothing may be consumed.
// An expression that draws from an external resource should not do so in a
// preview.
func (c *Context) Preview() bool { return c.h.Preview() }

// NewContext returns a Context for testing an Expression on its own: the
// call's instant is now, its variables vars, and there is no sequence value
// and nothing printed before the part. WithSeq and WithPrinted add them.
func NewContext(ctx context.Context, now time.Time, vars map[string]string) *Context {
	return &Context{&testHost{ctx: ctx, now: now, vars: vars}}
}

// WithSeq returns a copy of c, made by [NewContext], whose sequence value
// is n printed as text.
func (c *Context) WithSeq(n int64, text string) *Context {
	t := *c.test("WithSeq")
	t.seq, t.seqText, t.hasSeq = n, []byte(text), true
	return &Context{&t}
}

// WithPrinted returns a copy of c, made by [NewContext], for which the
// parts before the current one printed text.
func (c *Context) WithPrinted(text string) *Context {
	t := *c.test("WithPrinted")
	t.printed = []byte(text)
	return &Context{&t}
}

func (c *Context) test(method string) *testHost {
	t, ok := c.h.(*testHost)
	if !ok {
		panic("expression: Context." + method + " on a Context not made by NewContext")
	}
	return t
}

// testHost is the Host of a Context made by NewContext.
type testHost struct {
	ctx     context.Context
	now     time.Time
	vars    map[string]string
	seq     int64
	seqText []byte
	hasSeq  bool
	printed []byte
}

func (t *testHost) Context() context.Context       { return t.ctx }
func (t *testHost) Time() time.Time                { return t.now }
func (t *testHost) Var(name string) (string, bool) { v, ok := t.vars[name]; return v, ok }
func (t *testHost) Seq() (int64, []byte, bool)     { return t.seq, t.seqText, t.hasSeq }
func (t *testHost) Printed() []byte                { return t.printed }
func (t *testHost) Preview() bool                  { return false }

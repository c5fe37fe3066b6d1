package expression

import (
	"context"
	"time"
)

// OwnerKey is the variable that, when set, is the counter key of the
// template's sequences (see [Context.Key]).
const OwnerKey = "ownerKey"

type mode uint8

const (
	modeRender mode = iota
	modePreview
	modeCheck
)

type kv struct{ k, v string }

// Context is what the parts of one number share while it is built or parsed
// back. A Context belongs to one call on one goroutine; an expression must
// not keep it after Append or Check returns.
type Context struct {
	ctx  context.Context
	now  time.Time // the instant; zero until read from prog.clock
	vars map[string]string
	set  []kv
	prog *Program
	st   *state
	mode mode
	cur  int // index of the part being evaluated

	seq    int64
	hasSeq bool
	// The built-in sequence part records where it printed the number in
	// the buffer being built (seqStart:seqEnd of out, or of st.buf);
	// SetSeq keeps its own copy in seqOwned. Offsets rather than a slice
	// let a Context live on the stack (see Program.renderDirect).
	seqStart, seqEnd int
	seqOwned         []byte

	// out is the buffer being built by renderDirect, as passed to the
	// part being evaluated.
	out []byte

	sample int64  // preview: the sample number sequences print
	text   string // check: the number being parsed back
	spans  []span // check: the text of each part

	batch batch
}

type batch struct {
	want int     // numbers the current NextN call will need; 0 outside NextN
	seq  *Seq    // the sequence part the buffered numbers belong to
	key  string  // and their key
	nums []int64 // buffered numbers not yet used
}

// NewContext returns a Context for testing an Expression on its own: Key
// returns "test", Printed returns nil. sn builds its own Contexts.
func NewContext(ctx context.Context, now time.Time, vars map[string]string) *Context {
	return &Context{ctx: ctx, now: now, vars: vars}
}

// Context returns the context.Context of the call.
func (c *Context) Context() context.Context { return c.ctx }

// Time returns the instant of the call: the instant the caller passed, or
// the clock, read once per call on first use. Every part of one number sees
// the same instant.
func (c *Context) Time() time.Time {
	if c.now.IsZero() && c.prog != nil {
		c.now = c.prog.clock()
	}
	return c.now
}

// Var returns variable name: a value set during the call by [Context.SetVar]
// (template setters such as "@<ownerKey, value=SN>" do that) or else a
// per-call value. When a number is parsed back, it is the text matched for
// the variable's part.
func (c *Context) Var(name string) (string, bool) {
	for i := len(c.set) - 1; i >= 0; i-- {
		if c.set[i].k == name {
			return c.set[i].v, true
		}
	}
	if c.prog != nil {
		for _, s := range c.prog.static {
			if s.k == name {
				return s.v, true
			}
		}
	}
	v, ok := c.vars[name]
	return v, ok
}

// SetVar sets variable name for the rest of the call. Values set this way
// win over per-call values of the same name.
func (c *Context) SetVar(name, value string) { c.set = append(c.set, kv{name, value}) }

// Key returns the counter key of the template: the [OwnerKey] variable when
// the template prints it, otherwise the canonical template text. Sequences
// add their own key= variable and reset period to it.
func (c *Context) Key() string {
	if c.prog == nil {
		return "test"
	}
	if c.prog.ownerPrinted {
		if v, ok := c.Var(OwnerKey); ok {
			return v
		}
	}
	return c.prog.key
}

// Seq returns the sequence value of the call, once a sequence part has been
// evaluated (or parsed back).
func (c *Context) Seq() (int64, bool) { return c.seq, c.hasSeq }

// SeqText returns the sequence value exactly as printed, padding included,
// or nil before a sequence part has been evaluated. The slice is valid until
// the call returns and must not be modified.
func (c *Context) SeqText() []byte {
	switch {
	case !c.hasSeq:
		return nil
	case c.seqOwned != nil:
		return c.seqOwned
	case c.st != nil:
		return c.st.buf[c.seqStart:c.seqEnd]
	}
	return c.out[c.seqStart:c.seqEnd]
}

// SetSeq records the sequence value n and its printed text. Sequence parts
// call it; check characters read it.
func (c *Context) SetSeq(n int64, printed []byte) {
	c.seq, c.hasSeq = n, true
	c.seqOwned = append(c.seqOwned[:0:0], printed...)
}

// setSeqAt records the sequence value n, printed at buf[start:end] of the
// buffer being built.
func (c *Context) setSeqAt(n int64, start, end int) {
	c.seq, c.hasSeq, c.seqStart, c.seqEnd = n, true, start, end
	if c.seqOwned != nil {
		c.seqOwned = nil
	}
}

// resetSeq forgets the sequence value, before a new number.
func (c *Context) resetSeq() {
	c.seq, c.hasSeq = 0, false
	if c.seqOwned != nil {
		c.seqOwned = nil
	}
}

// Preview reports whether the number is being rendered for a preview, in
// which case sequences print sample values and nothing may be consumed.
// An expression that draws from an external resource should not do so in a
// preview.
func (c *Context) Preview() bool { return c.mode == modePreview }

// Printed returns the text printed by the parts before the current one, in
// template position. It is complete for [After] parts; for earlier Orders it
// holds only the parts evaluated so far. The slice is valid until the
// current part returns and must not be modified.
func (c *Context) Printed() []byte {
	switch {
	case c.mode == modeCheck:
		return []byte(c.text[:c.spans[c.cur].start])
	case c.st == nil:
		return c.out
	case c.prog.inOrder:
		return c.st.buf
	}
	return c.st.printedBefore(c.prog, c.cur)
}

// draw returns the next number for s and key, from the batch buffered for
// NextN when there is one.
func (c *Context) draw(s *Seq, key string) (int64, error) {
	b := &c.batch
	if b.want > 0 && s.batcher != nil {
		if b.seq == s && b.key == key && len(b.nums) > 0 {
			n := b.nums[0]
			b.nums = b.nums[1:]
			return n, nil
		}
		if b.seq == nil {
			b.seq, b.key = s, key
			var err error
			b.nums, err = s.batcher.NextN(c.ctx, key, b.nums[:0], b.want)
			if err != nil {
				return 0, err
			}
			if len(b.nums) > 0 {
				n := b.nums[0]
				b.nums = b.nums[1:]
				return n, nil
			}
		}
	}
	if s.handle != nil && key == s.fixedKey {
		return s.handle.Next(c.ctx)
	}
	return s.gen.Next(c.ctx, key)
}

// appendInt appends n (not negative) in decimal, left-padded with zeros to
// width digits (width <= 19), two digits per step from the right.
func appendInt(dst []byte, n int64, width int) []byte {
	var tmp [20]byte
	i := len(tmp)
	u := uint64(n)
	for u >= 100 {
		q := u / 100
		r := (u - q*100) * 2
		i -= 2
		tmp[i], tmp[i+1] = digitPairs[r], digitPairs[r+1]
		u = q
	}
	if u >= 10 {
		i -= 2
		tmp[i], tmp[i+1] = digitPairs[u*2], digitPairs[u*2+1]
	} else {
		i--
		tmp[i] = byte('0' + u)
	}
	for start := len(tmp) - width; i > start; {
		i--
		tmp[i] = '0'
	}
	return append(dst, tmp[i:]...)
}

const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

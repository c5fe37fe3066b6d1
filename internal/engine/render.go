package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/batchjson"
	"github.com/sngen/sn/internal/builtin"
	"github.com/sngen/sn/internal/host"
	"github.com/sngen/sn/internal/lang"
	"github.com/sngen/sn/sequence"
)

// MaxN is the most numbers one call to NextN or Preview issues.
const MaxN = 100_000

type mode uint8

const (
	modeRender  mode = iota
	modePreview      // sample sequence values; missing variables print as {name}
	modeWitness      // fixed sequence values and fills; nothing is drawn
)

// call is one rendering: the inputs, and the sequence values already drawn.
type call struct {
	ctx  context.Context
	at   time.Time // the instant, resolved when the plan needs one
	vars map[string]string
	mode mode
	fill map[int]string // modeWitness: what random and custom parts print, by part index
	// The values drawn, by sequence ordinal: in v for up to two sequence
	// parts (an array, so that a call on the stack keeps them there), in
	// more beyond.
	v    [2]int64
	more []int64
}

// val returns the value of the sequence part of ordinal k.
func (c *call) val(k int) int64 {
	if c.more != nil {
		return c.more[k]
	}
	return c.v[k]
}

// setVals makes room for n values and returns them to be filled.
func (c *call) setVals(n int) []int64 {
	if n > len(c.v) {
		c.more = make([]int64, n)
		return c.more
	}
	c.more = nil
	return c.v[:n]
}

// Next returns the next number for the call's instant (zero: the clock) and
// variables. It checks the instant and the variables before drawing any
// number.
func (pl *Plan) Next(ctx context.Context, at time.Time, vars map[string]string) (string, error) {
	buf, err := pl.AppendNext(ctx, make([]byte, 0, pl.bufSize), at, vars)
	if err != nil || len(buf) == 0 {
		return "", err
	}
	return unsafe.String(&buf[0], len(buf)), nil
}

// AppendNext appends the next number to dst.
func (pl *Plan) AppendNext(ctx context.Context, dst []byte, at time.Time, vars map[string]string) (out []byte, err error) {
	if err := ctx.Err(); err != nil {
		return dst, err
	}
	given := !at.IsZero()
	if pl.needTime || len(pl.vars) > 0 {
		if at, err = pl.prepare(at, vars, false); err != nil {
			return dst, err
		}
	}
	if pl.simple != nil {
		// The commonest case: text, one sequence, a check over it.
		n, err := pl.draw(ctx, pl.simple.seq, at, given, vars)
		if err != nil {
			return dst, err
		}
		return pl.renderSimple(dst, n)
	}
	if pl.direct && len(pl.seqs) == 1 {
		// The common case: one sequence, rendered in template position.
		n, err := pl.draw(ctx, &pl.parts[pl.seqs[0]], at, given, vars)
		if err != nil {
			return dst, err
		}
		in := inputs{at: at, vars: vars, one: n}
		return pl.renderDirect(dst, &in)
	}
	var small [2]int64
	vals := small[:0]
	if len(pl.seqs) > len(small) {
		vals = make([]int64, 0, len(pl.seqs))
	}
	for _, i := range pl.seqs {
		n, err := pl.draw(ctx, &pl.parts[i], at, given, vars)
		if err != nil {
			return dst, err
		}
		vals = append(vals, n)
	}
	if pl.direct {
		in := inputs{at: at, vars: vars, vals: vals}
		return pl.renderDirect(dst, &in)
	}
	c := call{ctx: ctx, at: at, vars: vars}
	copy(c.setVals(len(vals)), vals)
	return pl.renderOrdered(dst, &c)
}

// prepare resolves the instant, when the plan needs one, and checks it and
// the variables: nothing is drawn for a call that could not print.
func (pl *Plan) prepare(at time.Time, vars map[string]string, preview bool) (time.Time, error) {
	if pl.needTime {
		if at.IsZero() {
			at = pl.clock()
		}
		for _, i := range pl.dates {
			p := &pl.parts[i]
			if err := p.date.Fits(at); err != nil {
				return at, p.fail(fmt.Errorf("%w: %v", ErrInstant, err))
			}
		}
	}
	for _, i := range pl.vars {
		p := &pl.parts[i]
		v, ok := vars[p.Name]
		if !ok && preview {
			continue
		}
		if err := p.checkVar(v, ok); err != nil {
			return at, p.fail(err)
		}
	}
	return at, nil
}

// checkVar checks a variable's value against the part's limits. Its
// error is a *VarError.
func (p *Part) checkVar(v string, ok bool) error {
	bad := func(format string, a ...any) error {
		return &VarError{Name: p.Name, Err: fmt.Errorf(format, a...)}
	}
	switch {
	case !ok || v == "":
		return bad("%w: %q was not given", ErrVarMissing, p.Name)
	case !utf8.ValidString(v):
		return bad("%w: %q=%s is not valid UTF-8", ErrVarInvalid, p.Name, Quote(v))
	case p.maxBytes > 0 && len(v) > p.maxBytes && utf8.RuneCountInString(v) > p.maxBytes:
		return bad("%w: %q is %d characters long, more than maxlen=%d", ErrVarInvalid, p.Name, utf8.RuneCountInString(v), p.maxBytes)
	case p.maxBytes == 0 && len(v) > DefaultVarLen && utf8.RuneCountInString(v) > DefaultVarLen:
		return bad("%w: %q is %d characters long, more than the %d a variable without maxlen= takes", ErrVarInvalid, p.Name, utf8.RuneCountInString(v), DefaultVarLen)
	}
	for _, r := range v {
		if p.chars.Has(r) {
			continue
		}
		switch {
		case p.charsArg != "":
			return bad("%w: %q=%s has %q, outside chars=%s", ErrVarInvalid, p.Name, Quote(v), r, p.charsArg)
		case !lang.Printable.Has(r):
			return bad("%w: %q=%s has %q, a control, format or unassigned character that a number cannot print unseen (give the variable chars= to choose its characters)", ErrVarInvalid, p.Name, Quote(v), r)
		}
		return bad("%w: %q=%s has %q, which the template prints as literal text (give the variable chars= to choose its characters)", ErrVarInvalid, p.Name, Quote(v), r)
	}
	for _, a := range p.overAll {
		for _, r := range v {
			if !a.admits(r) {
				return bad("%w: %q=%s has %q, which the checksum %s cannot take: it is computed over the variable (over=all; give the variable chars= with characters the algorithm takes)", ErrVarInvalid, p.Name, Quote(v), r, a.algo.Name())
			}
		}
	}
	return nil
}

// DefaultVarLen is the longest value, in bytes, of a variable without
// maxlen=: a longer value is ErrVarInvalid before anything is drawn, so
// that counter keys, messages and logs stay small.
const DefaultVarLen = MaxVarLen

// Quote quotes s for a message, as %q does, shortened to its first 64
// bytes and its length when longer: a value given per call may be long,
// and a message or a log line should not be.
func Quote(s string) string {
	const keep = 64
	if len(s) <= keep {
		return strconv.Quote(s)
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// VarError is a per-call variable that is missing or invalid. It wraps
// ErrVarMissing or ErrVarInvalid.
type VarError struct {
	// Name is the variable's name.
	Name string
	// Err says what is wrong with it.
	Err error
}

// Error returns Err's message, which names the variable.
func (e *VarError) Error() string { return e.Err.Error() }

// Unwrap returns Err, which wraps ErrVarMissing or ErrVarInvalid.
func (e *VarError) Unwrap() error { return e.Err }

// callKey returns the counter key of sequence part s for a call.
func (pl *Plan) callKey(s *Part, at time.Time, vars map[string]string) string {
	k, _ := pl.callKeyPeriod(s, at, vars)
	return k
}

// callKeyPeriod returns the counter key of sequence part s for a call, and
// its period.
func (pl *Plan) callKeyPeriod(s *Part, at time.Time, vars map[string]string) (_ string, b int64) {
	if s.fixedKey != "" {
		return s.fixedKey, 0
	}
	owner, val := pl.keyVars(s, vars)
	if s.Reset != builtin.Never {
		b = bucket(at, pl.parts[s.keyDate].date, s.Reset)
		if s.period != nil {
			pl.turn(s, b)
		}
	}
	return pl.seqKey(s, owner, val, b), b
}

// keyVars returns the ownerKey and key= value of sequence part s's
// counter key in a call with vars.
func (pl *Plan) keyVars(s *Part, vars map[string]string) (owner, val string) {
	if pl.owner >= 0 {
		owner = vars[OwnerKey]
	}
	if s.KeyVar != "" {
		if q := &pl.parts[s.keyPart]; q.Kind == Setter {
			val = q.Lit
		} else {
			val = vars[s.KeyVar]
		}
	}
	return owner, val
}

// turn records that sequence part s draws in period b, and when b is the
// first call past the latest period, releases that period's key in the
// sequence: its counter is done. A call for an earlier period (an instant
// given in the past) releases nothing; its key comes back from the store.
func (pl *Plan) turn(s *Part, b int64) {
	old := s.period.Load()
	if b > old && s.period.CompareAndSwap(old, b) && old != 0 {
		s.releaser.Release(pl.key(s, "", "", old))
	}
}

// Bind checks, once, what part p's store must agree on before p draws
// from it or raises its floor: the check value of its obfuscation key,
// recorded in the store (sequence.Remember) with its first number. A
// store that records another key's is refused with ErrKey; a store that
// keeps no records is not checked. Draws call it; callers that raise a
// floor call it first.
func (p *Part) Bind(ctx context.Context) error {
	if p.keyOK == nil || p.keyOK.Load() {
		return nil
	}
	got, err := sequence.Remember(ctx, p.gen, "sn obfuscate "+p.Obfuscate, p.keyCheck)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
	case err != nil:
		return p.fail(fmt.Errorf("recording the check value of the key of obfuscate=%s: %w", p.Obfuscate, err))
	case got != p.keyCheck:
		return p.fail(fmt.Errorf("%w: obfuscate=%s: the store records numbers issued with a key whose check value is %s, and this key's is %s: "+
			"with another key every number would print, read back and take a floor wrongly; give the key the series was issued with", ErrKey, p.Obfuscate, got, p.keyCheck))
	}
	p.keyOK.Store(true)
	return nil
}

// draw draws the next number of sequence part s. A panic in the sequence,
// an error, and a number that is not positive are errors naming the part.
func (pl *Plan) draw(ctx context.Context, s *Part, at time.Time, given bool, vars map[string]string) (n int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, s.fail(recovered(r))
		}
	}()
	// The key's check value first: another key under a name the store
	// knows is refused as that (ErrKey), before the catalog sees a new
	// template.
	if s.keyOK != nil && !s.keyOK.Load() {
		if err := s.Bind(ctx); err != nil {
			return 0, err
		}
	}
	if pl.enroll != nil && !pl.enroll.done.Load() {
		if err := pl.Enroll(ctx); err != nil {
			return 0, err
		}
	}
	if s.holder != nil {
		if h := HoldsOf(ctx); h != nil {
			return pl.hold(ctx, s, at, given, vars, h)
		}
	}
	switch {
	case s.handle != nil:
		n, err = s.handle.Next(ctx)
	case s.guard != nil:
		key, b := pl.callKeyPeriod(s, at, vars)
		if err := s.guard.check(ctx, b, at, given, key); err != nil {
			return 0, s.fail(err)
		}
		if n, err = s.gen.Next(ctx, key); err == nil {
			s.guard.drawn(ctx, at, key)
		}
	default:
		n, err = s.gen.Next(ctx, pl.callKey(s, at, vars))
	}
	if err != nil {
		return 0, s.fail(err)
	}
	if n <= 0 {
		return 0, s.fail(fmt.Errorf("%w: %d", ErrSequence, n))
	}
	return n, nil
}

// drawN draws n numbers of sequence part s, in one batch when its sequence
// is a sequence.Batcher. On error it returns the numbers drawn so far.
func (pl *Plan) drawN(ctx context.Context, s *Part, at time.Time, given bool, vars map[string]string, out []int64, n int) (_ []int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = s.fail(recovered(r))
		}
	}()
	// The key's check value first: another key under a name the store
	// knows is refused as that (ErrKey), before the catalog sees a new
	// template.
	if s.keyOK != nil && !s.keyOK.Load() {
		if err := s.Bind(ctx); err != nil {
			return out, err
		}
	}
	if pl.enroll != nil && !pl.enroll.done.Load() {
		if err := pl.Enroll(ctx); err != nil {
			return out, err
		}
	}
	if s.batcher != nil {
		key, b := pl.callKeyPeriod(s, at, vars)
		if s.guard != nil {
			if err := s.guard.check(ctx, b, at, given, key); err != nil {
				return out, s.fail(err)
			}
			defer s.guard.drawn(ctx, at, key)
		}
		out, err = s.batcher.NextN(ctx, key, out, n)
		for i, v := range out {
			if v <= 0 {
				return out[:i], s.fail(fmt.Errorf("%w: %d", ErrSequence, v))
			}
		}
		if err != nil {
			return out, s.fail(err)
		}
		if len(out) != n {
			return out[:min(len(out), n)], s.fail(&batchError{asked: n, got: len(out)})
		}
		return out, nil
	}
	for len(out) < n {
		v, err := pl.draw(ctx, s, at, given, vars)
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// batchError is a batch of another size than asked for: a broken
// sequence, ErrSequence.
type batchError struct{ asked, got int }

func (e *batchError) Error() string {
	return fmt.Sprintf("sequence returned %d numbers for a batch of %d", e.got, e.asked)
}

func (e *batchError) Is(target error) bool { return target == ErrSequence }

// NextN returns n numbers sharing one instant and one set of variables. On
// error, the numbers issued so far are returned with it.
func (pl *Plan) NextN(ctx context.Context, n int, at time.Time, vars map[string]string) ([]string, error) {
	return pl.many(ctx, n, at, vars, modeRender)
}

// Preview returns n sample numbers without drawing from any sequence: the
// sequences print 1, 2, ... n; variables not given print as {NAME}.
func (pl *Plan) Preview(ctx context.Context, n int, at time.Time, vars map[string]string) ([]string, error) {
	return pl.many(ctx, n, at, vars, modePreview)
}

func (pl *Plan) many(ctx context.Context, n int, at time.Time, vars map[string]string, m mode) ([]string, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	// One buffer holds every number, and each string points into it: two
	// allocations for the batch. Should a number outgrow the estimate, the
	// buffer moves, and the strings made before keep the old one alive.
	s := sink{dst: make([]byte, 0, n*pl.bufSize), strs: true, out: make([]string, 0, n)}
	err := pl.appendMany(ctx, &s, n, at, vars, m)
	if len(s.out) == 0 {
		return nil, err
	}
	return s.out, err
}

// AppendNextN appends n numbers sharing one instant and one set of
// variables to dst, one after another, and the end of each in dst to
// ends. On error, the numbers issued so far are appended with it.
func (pl *Plan) AppendNextN(ctx context.Context, dst []byte, ends []int, n int, at time.Time, vars map[string]string) ([]byte, []int, error) {
	if err := checkN(n); err != nil {
		return dst, ends, err
	}
	s := sink{dst: dst, ends: ends}
	err := pl.appendMany(ctx, &s, n, at, vars, modeRender)
	return s.dst, s.ends, err
}

// AppendNextJSON is AppendNextN for a writer of JSON: it appends the
// numbers to dst as JSON strings separated by commas, "A","B", and
// returns how many. Numbers of the simple form whose text JSON takes as
// it is are rendered framed (see Plan.quoted); others are tested and, if
// they must be, escaped one by one. On error, the numbers issued so far
// are appended with it.
func (pl *Plan) AppendNextJSON(ctx context.Context, dst []byte, n int, at time.Time, vars map[string]string) ([]byte, int, error) {
	if err := checkN(n); err != nil {
		return dst, 0, err
	}
	if n == 1 {
		start := len(dst)
		dst, err := pl.AppendNext(ctx, append(dst, '"'), at, vars)
		if err != nil {
			return dst[:start], 0, err
		}
		dst = quote(dst, start+1)
		return dst[:len(dst)-1], 1, nil
	}
	s := sink{dst: dst, json: true}
	err := pl.appendMany(ctx, &s, n, at, vars, modeRender)
	if s.n > 0 {
		s.dst = s.dst[:len(s.dst)-1] // the last comma
	}
	return s.dst, s.n, err
}

// quote ends the JSON string of the number dst[start:], whose opening
// quote is at start-1, and adds a comma: when the number holds a byte
// JSON escapes, it is written again, escaped.
func quote(dst []byte, start int) []byte {
	if batchjson.Clean(dst[start:]) {
		return append(dst, '"', ',')
	}
	num := slices.Clone(dst[start:])
	return append(batchjson.AppendString(dst[:start-1], num), ',')
}

// sink is where appendMany puts the numbers: in dst, one after another,
// and the end of each in ends; or, with strs, also strings of them,
// pointing into dst, in out; or, with json, in dst as JSON strings each
// followed by a comma.
type sink struct {
	dst  []byte
	ends []int
	strs bool
	out  []string
	json bool
	n    int // how many numbers appendMany put
}

// checkN refuses a batch of n outside 0 to MaxN.
func checkN(n int) error {
	if n < 0 || n > MaxN {
		return fmt.Errorf("%w: %d numbers asked for; one call gives 0 to %d", ErrTooMany, n, MaxN)
	}
	return nil
}

// appendMany draws n numbers and puts them in s.
func (pl *Plan) appendMany(ctx context.Context, s *sink, n int, at time.Time, vars map[string]string, m mode) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	given := !at.IsZero()
	at, err := pl.prepare(at, vars, m == modePreview)
	if err != nil || n == 0 {
		return err
	}
	var small [2][]int64
	draws := small[:0]
	if len(pl.seqs) > len(small) {
		draws = make([][]int64, 0, len(pl.seqs))
	}
	got := n
	var drawErr error
	var pooled [2]*[]int64
	defer func() {
		for _, p := range pooled {
			if p != nil {
				putDraws(p)
			}
		}
	}()
	for k, i := range pl.seqs {
		if m == modePreview {
			d := make([]int64, n)
			for j := range d {
				d[j] = int64(j + 1)
			}
			draws = append(draws, d)
			continue
		}
		buf := getDraws(got)
		if k < len(pooled) {
			pooled[k] = buf
		}
		var d []int64
		d, drawErr = pl.drawN(ctx, &pl.parts[i], at, given, vars, (*buf)[:0], got)
		draws = append(draws, d)
		got = min(got, len(d))
		if drawErr != nil {
			break
		}
	}
	if len(draws) < len(pl.seqs) {
		got = 0 // a sequence drew nothing: no number can be printed
	}
	size := pl.bufSize
	if s.json {
		size += 3 // "",
	}
	dst := slices.Grow(s.dst, got*size)
	if !s.strs && !s.json {
		s.ends = slices.Grow(s.ends, got)
	}
	// The simple form renders a run of numbers each from the one before
	// (sink.runs), framed for JSON when quoted is not nil.
	form := pl.simple
	if s.json {
		form = pl.quoted
	}
	if form != nil && m == modeRender {
		s.dst = dst
		if err := s.runs(form, draws[0][:got]); err != nil {
			return err
		}
		return drawErr
	}
	last := len(dst) // where the last whole number ends
	c := call{ctx: ctx, at: at, vars: vars, mode: m}
	vals := c.setVals(len(pl.seqs))
	for j := 0; j < got; j++ {
		for k := range vals {
			vals[k] = draws[k][j]
		}
		if s.json {
			dst = append(dst, '"')
		}
		dst, err = pl.render(dst, &c)
		if err != nil {
			s.dst = dst[:last]
			return err
		}
		if s.json {
			dst = quote(dst, last+1)
		}
		s.add(dst, last)
		last = len(dst)
	}
	s.dst = dst
	return drawErr
}

// drawPool holds the slices a batch draws into, so that NextN allocates
// only what it returns.
var drawPool sync.Pool

// getDraws returns a slice with room for n numbers.
func getDraws(n int) *[]int64 {
	if p, ok := drawPool.Get().(*[]int64); ok && cap(*p) >= n {
		return p
	}
	s := make([]int64, 0, n)
	return &s
}

// putDraws gives a slice back, unless it is too big to keep.
func putDraws(p *[]int64) {
	if cap(*p) <= 1<<12 {
		drawPool.Put(p)
	}
}

// render appends the number for c, whose sequence values are drawn.
func (pl *Plan) render(dst []byte, c *call) ([]byte, error) {
	if !pl.direct {
		return pl.renderOrdered(dst, c)
	}
	vals := c.v[:min(len(pl.seqs), len(c.v))]
	if c.more != nil {
		vals = c.more
	}
	in := inputs{at: c.at, vars: c.vars, vals: vals, mode: c.mode, fill: c.fill}
	return pl.renderDirect(dst, &in)
}

// inputs are what the direct renderer reads: a call's instant, variables,
// mode and fills, and the values drawn. It is kept apart from call, which
// a custom part's Context can reach, so that it stays on the stack.
type inputs struct {
	at   time.Time
	vars map[string]string
	vals []int64 // by sequence ordinal; nil when there is one sequence
	one  int64   // the value of the one sequence
	mode mode
	fill map[int]string
}

// renderDirect renders a template of built-in parts that evaluate in
// template position, from its steps, with vals the values drawn.
func (pl *Plan) renderDirect(dst []byte, in *inputs) ([]byte, error) {
	start := len(dst)
	var small [2][2]int
	spans := small[:]
	if len(pl.seqs) > len(small) {
		spans = make([][2]int, len(pl.seqs))
	}
	for i := range pl.ops {
		o := &pl.ops[i]
		p := o.part
		switch o.kind {
		case Text:
			dst = append(dst, o.lit...)
		case Var:
			dst = p.appendVar(dst, in.vars, in.mode)
		case Seq:
			s := len(dst)
			var err error
			n := in.one
			if in.vals != nil {
				n = in.vals[p.ord]
			}
			if dst, err = p.appendSeq(dst, n); err != nil {
				return dst[:start], err
			}
			spans[p.ord] = [2]int{s, len(dst)}
		case Date:
			dst = p.date.AppendTime(dst, in.at)
		case Checksum:
			payload := dst[start:]
			if o.seq >= 0 {
				sp := spans[o.seq]
				payload = dst[sp[0]:sp[1]]
			}
			var err error
			if dst, err = p.appendCheck(dst, payload); err != nil {
				return dst[:start], err
			}
		case Random:
			dst = p.appendRandom(dst, in.mode, in.fill[o.index])
		}
	}
	return dst, nil
}

// op is one step of the direct renderer: literal text (adjacent text and
// setters merged), or a part.
type op struct {
	kind  Kind // Text for literal text
	lit   string
	part  *Part
	index int // of part
	seq   int // Checksum over=seq: the ordinal of the sequence checked, else -1
}

// compileOps builds the direct renderer's steps.
func (pl *Plan) compileOps() {
	for i := range pl.parts {
		p := &pl.parts[i]
		kind := p.Kind
		if kind == Setter {
			kind = Text
		}
		if kind == Text {
			if n := len(pl.ops); n > 0 && pl.ops[n-1].kind == Text {
				pl.ops[n-1].lit += p.Lit
				continue
			}
			pl.ops = append(pl.ops, op{kind: Text, lit: p.Lit, index: i, seq: -1})
			continue
		}
		o := op{kind: kind, part: p, index: i, seq: -1}
		if kind == Checksum && p.payload >= 0 {
			o.seq = pl.parts[p.payload].ord
		}
		pl.ops = append(pl.ops, o)
	}
}

func (p *Part) appendVar(dst []byte, vars map[string]string, m mode) []byte {
	v, ok := vars[p.Name]
	if !ok && m == modePreview {
		dst = append(dst, '{')
		dst = append(dst, p.Name...)
		return append(dst, '}')
	}
	return append(dst, v...)
}

func (p *Part) appendSeq(dst []byte, n int64) ([]byte, error) {
	start := len(dst)
	if p.perm != nil {
		if n > p.maxSeq {
			return dst, p.fail(fmt.Errorf("%w: %d has more than %d digits", ErrOverflow, n, p.Width))
		}
		n = 1 + int64(p.perm.Apply(uint64(n-1)))
	}
	if p.Digits != "" {
		dst = p.appendDigits(dst, n, p.Width)
		if p.Width > 0 && !p.Grow && len(dst)-start > p.Width {
			return dst[:start], p.fail(fmt.Errorf("%w: %d has more than %d digits in base %d (use overflow=grow to allow it)", ErrOverflow, n, p.Width, len(p.Digits)))
		}
		return dst, nil
	}
	dst = appendInt(dst, n, p.Width)
	if p.Width > 0 && !p.Grow && len(dst)-start > p.Width {
		return dst[:start], p.fail(fmt.Errorf("%w: %d has more than %d digits (use overflow=grow to allow it)", ErrOverflow, n, p.Width))
	}
	return dst, nil
}

func (p *Part) appendCheck(dst, payload []byte) ([]byte, error) {
	var err error
	if p.app != nil {
		if dst, err = p.app.AppendCheck(dst, payload); err != nil {
			return dst, p.fail(err)
		}
		return dst, nil
	}
	s, err := p.check.Algo.Compute(string(payload))
	if err != nil {
		return dst, p.fail(err)
	}
	return append(dst, s...), nil
}

// appendRandom appends random text, or in a witness its fill.
func (p *Part) appendRandom(dst []byte, m mode, fill string) []byte {
	if m == modeWitness {
		return append(dst, fill...)
	}
	dst, _ = p.random.Append(dst, nil)
	return dst
}

// renderOrdered renders a template that has custom expressions, or a check
// character before the sequence it checks: parts are evaluated by Order,
// then position, each into its own span, and assembled in position.
func (pl *Plan) renderOrdered(dst []byte, in *call) (out []byte, err error) {
	// The state is a custom part's Context host and lives on the heap: it
	// gets copies, so that in (and the values it points to) can stay on the
	// caller's stack.
	c := &call{ctx: in.ctx, at: in.at, vars: in.vars, mode: in.mode, fill: in.fill, v: in.v, more: in.more}
	st := &state{pl: pl, c: c, spans: make([][2]int, len(pl.parts)), cur: -1}
	for i := range st.spans {
		st.spans[i] = [2]int{-1, -1}
	}
	defer func() {
		if r := recover(); r != nil && st.cur >= 0 {
			out, err = dst, pl.parts[st.cur].fail(recovered(r))
		}
	}()
	order := make([]int, len(pl.parts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(pl.parts[a].order) - int(pl.parts[b].order) })
	for _, i := range order {
		st.cur = i
		p := &pl.parts[i]
		start := len(st.buf)
		switch p.Kind {
		case Text, Setter:
			st.buf = append(st.buf, p.Lit...)
		case Var:
			st.buf = p.appendVar(st.buf, c.vars, c.mode)
		case Seq:
			if st.buf, err = p.appendSeq(st.buf, c.val(p.ord)); err != nil {
				return dst, err
			}
		case Date:
			st.buf = p.date.AppendTime(st.buf, c.at)
		case Checksum:
			var payload []byte
			if p.payload >= 0 {
				sp := st.spans[p.payload]
				payload = st.buf[sp[0]:sp[1]]
			} else {
				payload = st.Printed()
			}
			payload = append([]byte(nil), payload...) // st.buf may move while appending
			if st.buf, err = p.appendCheck(st.buf, payload); err != nil {
				return dst, err
			}
			if p.untrusted {
				if text := string(st.buf[start:]); len(text) != p.check.Algo.Len() || !p.nfa.Match(text) {
					return dst, p.fail(fmt.Errorf("%w: %s printed %q, which does not match %s", ErrPart, p.check.Algo.Name(), text, p.pattern))
				}
			}
		case Random:
			st.buf = p.appendRandom(st.buf, c.mode, c.fill[i])
		case Custom:
			if st.buf, err = st.custom(p, i); err != nil {
				return dst, err
			}
		}
		st.spans[i] = [2]int{start, len(st.buf)}
	}
	for _, sp := range st.spans {
		dst = append(dst, st.buf[sp[0]:sp[1]]...)
	}
	return dst, nil
}

// custom evaluates a custom expression and checks that it printed what its
// language allows.
func (st *state) custom(p *Part, i int) ([]byte, error) {
	if st.c.mode == modeWitness {
		return append(st.buf, st.c.fill[i]...), nil
	}
	if st.ectx == nil {
		st.ectx = host.Wrap(st).(*expression.Context)
	}
	// The part appends to a buffer of its own: the text printed before it
	// is out of its reach.
	b, err := p.expr.Append(nil, st.ectx)
	if err != nil {
		return st.buf, p.fail(err)
	}
	text := string(b)
	if p.max >= 0 && len(text) > p.max || !p.nfa.Match(text) {
		return st.buf, p.fail(fmt.Errorf("%w: %q does not match %s", ErrPart, text, p.pattern))
	}
	return append(st.buf, text...), nil
}

// state is the host of a custom expression's Context while a number is
// rendered by renderOrdered.
type state struct {
	pl    *Plan
	c     *call
	buf   []byte
	spans [][2]int // per part, in buf; {-1, -1} until evaluated
	cur   int
	ectx  *expression.Context
}

func (st *state) Context() context.Context { return st.c.ctx }
func (st *state) Time() time.Time {
	if st.c.at.IsZero() {
		st.c.at = st.pl.clock()
	}
	return st.c.at
}
func (st *state) Var(name string) (string, bool) { return st.pl.lookup(name, st.c.vars) }
func (st *state) Preview() bool                  { return st.c.mode == modePreview }

// Seq returns the value of the last sequence part, drawn before any part is
// evaluated, and its text: as printed, or as it will print.
func (st *state) Seq() (int64, []byte, bool) {
	last := st.pl.seqs[len(st.pl.seqs)-1]
	p := &st.pl.parts[last]
	n := st.c.val(p.ord)
	if sp := st.spans[last]; sp[0] >= 0 {
		return n, append([]byte(nil), st.buf[sp[0]:sp[1]]...), true // a copy: parts cannot write to the number
	}
	text, err := p.appendSeq(nil, n)
	if err != nil {
		return n, nil, true
	}
	return n, text, true
}

func (st *state) Printed() []byte {
	var b []byte
	for i := 0; i < st.cur; i++ {
		if sp := st.spans[i]; sp[0] >= 0 {
			b = append(b, st.buf[sp[0]:sp[1]]...)
		}
	}
	return b
}

// lookup returns variable name: a setter's value, else the per-call one.
func (pl *Plan) lookup(name string, vars map[string]string) (string, bool) {
	for i := range pl.parts {
		if p := &pl.parts[i]; p.Kind == Setter && p.Name == name {
			return p.Lit, true
		}
	}
	v, ok := vars[name]
	return v, ok
}

// appendInt appends n (not negative) in decimal, left-padded with zeros to
// width digits (width <= 19), straight into dst. It is appendIntLuhn
// without the check digit, which costs a table lookup per two digits.
func appendInt(dst []byte, n int64, width int) []byte {
	dst, _ = appendIntLuhn(dst, n, width)
	return dst
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

// appendDigits appends n, which is not negative, in the part's digits (in
// decimal without radix= or alphabet=), padded to width with the digit for
// 0.
func (p *Part) appendDigits(dst []byte, n int64, width int) []byte {
	if p.Digits == "" {
		return appendInt(dst, n, width)
	}
	var buf [64]byte
	i := len(buf)
	b := int64(len(p.Digits))
	for {
		i--
		buf[i] = p.Digits[n%b]
		n /= b
		if n == 0 {
			break
		}
	}
	for len(buf)-i < width {
		i--
		buf[i] = p.Digits[0]
	}
	return append(dst, buf[i:]...)
}

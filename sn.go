package sn

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sngen/sn/checksum"
	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/parser"
	"github.com/sngen/sn/sequence"
)

// Vars are per-call variables: the values of "@<NAME>" parts.
type Vars map[string]string

// Option configures a Generator in [New].
type Option func(*options)

type options struct {
	registry *Registry
	seqs     map[string]sequence.Gen
	exprs    map[string]expression.Factory
	clock    func() time.Time
	errs     []error
}

// WithSequence makes g available to the template as name, for this
// Generator only. It takes precedence over a sequence of the same name in
// the registry.
func WithSequence(name string, g sequence.Gen) Option {
	return func(o *options) {
		switch {
		case g == nil:
			o.errs = append(o.errs, fmt.Errorf("sn: WithSequence(%q): nil sequence", name))
		case o.seqs[name] != nil:
			o.errs = append(o.errs, fmt.Errorf("sn: WithSequence(%q) given twice", name))
		default:
			o.seqs[name] = g
		}
	}
}

// WithExpression makes f available to the template as name, for this
// Generator only.
func WithExpression(name string, f expression.Factory) Option {
	return func(o *options) {
		switch {
		case f == nil:
			o.errs = append(o.errs, fmt.Errorf("sn: WithExpression(%q): nil factory", name))
		case o.exprs[name] != nil:
			o.errs = append(o.errs, fmt.Errorf("sn: WithExpression(%q) given twice", name))
		default:
			o.exprs[name] = f
		}
	}
}

// WithClock makes the Generator read the time from now instead of
// time.Now. It is read once per call.
func WithClock(now func() time.Time) Option {
	return func(o *options) {
		if now == nil {
			o.errs = append(o.errs, errors.New("sn: WithClock(nil)"))
			return
		}
		o.clock = now
	}
}

// WithRegistry makes the Generator resolve names in r instead of the
// default registry.
func WithRegistry(r *Registry) Option {
	return func(o *options) {
		if r == nil {
			o.errs = append(o.errs, errors.New("sn: WithRegistry(nil)"))
			return
		}
		o.registry = r
	}
}

// Generator issues numbers from a compiled template. A Generator is
// immutable and safe for concurrent use by multiple goroutines.
type Generator struct {
	tpl      *parser.Template
	prog     *expression.Program
	kinds    []string       // per part: text, setter, variable, sequence, expression
	groups   []string       // per part: regexp group name, "" for text
	pattern  string         // the public Regexp
	re       *regexp.Regexp // one group per part, named p0, p1, ...
	subexp   []int          // per part: its group's index in re
	maxLen   int
	prefixes func() []*regexp.Regexp // built on first need by diagnose
	// keyBase is the base of the counter key: the ownerKey the template
	// sets, or the canonical template; "" when ownerKey is given per call.
	keyBase string
}

// MustNew is like [New] but panics on error. It simplifies the
// initialization of package-level Generators from constant templates.
func MustNew(template string, opts ...Option) *Generator {
	g, err := New(template, opts...)
	if err != nil {
		panic(err)
	}
	return g
}

// New compiles template. Every name, argument and algorithm is resolved
// here, so that a Generator that compiled never fails for reasons the
// template could have told.
//
// A name in "@<NAME ...>" resolves, in this order, to a sequence (given by
// [WithSequence] or in the registry), an expression factory, or else a
// variable. The errors New returns wrap [ErrTemplate]; errors.As with a
// *parser.Error gives the byte offset of the offending part:
//   - syntax errors;
//   - a name registered both as a sequence and as an expression;
//   - unknown or bad arguments, unknown algorithms, unknown time zones;
//   - a template with no sequence part (every number would be the same);
//   - reset= without a date printed at least as finely, and key=VAR
//     without VAR printed or without a separator around it: either would
//     print the same number twice;
//   - a checksum the algorithm cannot compute over the template's text.
func New(template string, opts ...Option) (*Generator, error) {
	o := &options{registry: defaultRegistry, seqs: map[string]sequence.Gen{}, exprs: map[string]expression.Factory{}, clock: time.Now}
	for _, opt := range opts {
		opt(o)
	}
	if len(o.errs) > 0 {
		return nil, errors.Join(o.errs...)
	}
	tpl, err := parser.Parse(template)
	if err != nil {
		return nil, &templateError{err}
	}
	c := &compiler{tpl: tpl, o: o}
	g, err := c.compile()
	if err != nil {
		return nil, err
	}
	return g, nil
}

// Next returns the next number. It reads the clock once.
func (g *Generator) Next(ctx context.Context) (string, error) {
	return g.NextAt(ctx, time.Time{}, nil)
}

// NextWith returns the next number with per-call variables.
func (g *Generator) NextWith(ctx context.Context, vars Vars) (string, error) {
	return g.NextAt(ctx, time.Time{}, vars)
}

// NextAt returns the next number for the instant at instead of the clock:
// pass a document's own date (its posting date) so that the number's date
// and reset period follow the document. A zero at means the clock.
func (g *Generator) NextAt(ctx context.Context, at time.Time, vars Vars) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	s, err := g.prog.Render(ctx, &expression.Call{At: at, Vars: vars})
	if err != nil {
		return "", wrapRun(err)
	}
	return s, nil
}

// AppendNext appends the next number to dst, allocating nothing when dst
// has room. at and vars are as for [Generator.NextAt].
func (g *Generator) AppendNext(dst []byte, ctx context.Context, at time.Time, vars Vars) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return dst, err
	}
	dst, err := g.prog.AppendRender(dst, ctx, &expression.Call{At: at, Vars: vars})
	if err != nil {
		return dst, wrapRun(err)
	}
	return dst, nil
}

// NextN returns n numbers. They share one reading of the clock, and a
// sequence that supports batches (sequence.Batcher) is asked for them at
// once. On error, the numbers issued so far are returned with it.
func (g *Generator) NextN(ctx context.Context, n int) ([]string, error) {
	return g.NextNAt(ctx, n, time.Time{}, nil)
}

// NextNAt is [Generator.NextN] with an instant and per-call variables, as
// for [Generator.NextAt].
func (g *Generator) NextNAt(ctx context.Context, n int, at time.Time, vars Vars) ([]string, error) {
	if n < 0 {
		return nil, fmt.Errorf("sn: NextN(%d): negative count", n)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if at.IsZero() {
		at = g.prog.Now()
	}
	out, err := g.prog.RenderN(make([]string, 0, min(n, 4096)), ctx, &expression.Call{At: at, Vars: vars}, n)
	if err != nil {
		return out, wrapRun(err)
	}
	return out, nil
}

// Preview returns n sample numbers without drawing from any sequence: the
// sequences print 1, 2, ... n. Variables not given print as their name in
// braces; those given are checked as by Next. at is as for
// [Generator.NextAt].
func (g *Generator) Preview(ctx context.Context, n int, at time.Time, vars Vars) ([]string, error) {
	if n < 0 {
		return nil, fmt.Errorf("sn: Preview(%d): negative count", n)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if at.IsZero() {
		at = g.prog.Now()
	}
	out, err := g.prog.RenderN(make([]string, 0, min(n, 4096)), ctx, &expression.Call{At: at, Vars: vars, Preview: true, Sample: 1}, n)
	if err != nil {
		return out, wrapRun(err)
	}
	return out, nil
}

// Floor makes every later number of the template's sequences greater than
// floor, for migrating from another system ("start above the largest
// order number we already have"). A floor never lowers a counter: one at or
// below what was already issued changes nothing.
//
// It needs counters that do not vary per call: a template with key=,
// reset= or a per-call ownerKey has many counters, and Floor returns an
// error wrapping errors.ErrUnsupported without changing anything, as it
// does when a sequence is not a sequence.Floorer.
func (g *Generator) Floor(ctx context.Context, floor int64) error {
	type target struct {
		part expression.Part
		fl   sequence.Floorer
		key  string
	}
	var ts []target
	for _, p := range g.prog.Parts() {
		s, ok := p.Expr.(*expression.Seq)
		if !ok {
			continue
		}
		key, ok := s.FixedKey()
		if !ok {
			return fmt.Errorf("sn: Floor: %s at offset %d: %w: its counter key varies per call (key=, reset= or a per-call ownerKey)", p.Name, p.Offset, errors.ErrUnsupported)
		}
		fl, ok := s.Gen().(sequence.Floorer)
		if !ok {
			return fmt.Errorf("sn: Floor: %s at offset %d: %w: %T cannot raise a floor", p.Name, p.Offset, errors.ErrUnsupported, s.Gen())
		}
		ts = append(ts, target{p, fl, key})
	}
	for _, t := range ts {
		if err := t.fl.Floor(ctx, t.key, floor); err != nil {
			return fmt.Errorf("sn: Floor: %s at offset %d: %w", t.part.Name, t.part.Offset, err)
		}
	}
	return nil
}

func wrapRun(err error) error {
	var pe *expression.PartError
	if errors.As(err, &pe) {
		return fmt.Errorf("sn: %w", err)
	}
	return err
}

// String returns the canonical template text. It is also the counter key of
// a template that sets no ownerKey.
func (g *Generator) String() string { return g.prog.Key() }

// MaxLen returns the longest number the template can produce, in bytes, or
// -1 when a part is unbounded (a variable without maxlen, a sequence with
// overflow=grow counts as 19 digits).
func (g *Generator) MaxLen() int { return g.maxLen }

// Regexp returns an anchored regular expression that matches the numbers of
// the template, with a named group per dynamic part: the part's name, with
// characters other than letters, digits and "_" replaced by "_", and "_2",
// "_3" added for repeated names. It uses the syntax common to Go (RE2),
// JavaScript (and so most OpenAPI and form validators), Java, .NET and
// PCRE: classes, counted repetition and "(?<name>...)" groups. PostgreSQL
// has no named groups; remove the "?<name>" parts for a CHECK constraint.
func (g *Generator) Regexp() string { return g.pattern }

// Validate reports whether s is a number this template could have produced:
// its structure, widths, dates and check characters. The error wraps
// [ErrInvalidNumber] and is a *[ValidationError] saying which part is
// wrong. Validate cannot know whether s was actually issued.
func (g *Generator) Validate(s string) error {
	m := g.re.FindStringSubmatchIndex(s)
	if m == nil {
		return g.diagnose(s)
	}
	parts := g.prog.Parts()
	spans := make([][2]int, len(parts))
	for i, j := range g.subexp {
		spans[i] = [2]int{m[2*j], m[2*j+1]}
	}
	err := g.prog.Check(context.Background(), s, spans)
	if err == nil {
		return nil
	}
	ve := &ValidationError{Number: s, Offset: -1, Err: err}
	var pe *expression.PartError
	if errors.As(err, &pe) {
		ve.Part, ve.Offset, ve.Err = pe.Name, pe.Offset, pe.Err
		for i, p := range parts {
			if p.Offset == pe.Offset {
				ve.Pos = spans[i][0]
			}
		}
	}
	return ve
}

// diagnose finds the first part that s does not match.
func (g *Generator) diagnose(s string) error {
	parts := g.prog.Parts()
	pos := 0
	for i, re := range g.prefixes() {
		m := re.FindStringIndex(s)
		if m == nil {
			p := parts[i]
			name := p.Name
			if g.kinds[i] == "text" {
				name = "text"
			}
			found := s[pos:]
			what := fmt.Errorf("want %s at byte %d, found %q", describe(p, g.kinds[i]), pos, found)
			if found == "" {
				what = fmt.Errorf("want %s at byte %d, found the end", describe(p, g.kinds[i]), pos)
			}
			return &ValidationError{Number: s, Part: name, Offset: p.Offset, Pos: pos, Err: what}
		}
		pos = m[1]
	}
	return &ValidationError{Number: s, Offset: -1, Pos: pos, Err: fmt.Errorf("unexpected %q after byte %d", s[pos:], pos)}
}

func describe(p expression.Part, kind string) string {
	if kind == "text" {
		return fmt.Sprintf("%q", string(p.Expr.(expression.Text)))
	}
	return partPattern(p.Expr)
}

// partPattern returns the regular expression of one part.
func partPattern(e expression.Expression) string {
	if p, ok := e.(expression.Patterner); ok {
		return p.Pattern()
	}
	if n := e.MaxLen(); n >= 0 {
		return fmt.Sprintf(".{0,%d}?", n)
	}
	return ".*?"
}

func (g *Generator) buildPrefixes() []*regexp.Regexp {
	parts := g.prog.Parts()
	out := make([]*regexp.Regexp, len(parts))
	var b strings.Builder
	b.WriteString("^(?:")
	for i, p := range parts {
		b.WriteString("(?:" + partPattern(p.Expr) + ")")
		out[i] = regexp.MustCompile(b.String() + ")")
		out[i].Longest() // let each part take all it can: the report then points past it
	}
	return out
}

// compiler turns a parsed template into a Generator.
type compiler struct {
	tpl     *parser.Template
	o       *options
	seqs    map[string]sequence.Gen
	exprs   map[string]expression.Factory
	parts   []expression.Part
	nodes   []*parser.Dynamic // per part; nil for text
	kinds   []string
	keyBase string // see Generator.keyBase
}

func (c *compiler) errAt(off int, format string, a ...any) error {
	return &templateError{&parser.Error{Template: c.tpl.Source, Offset: off, Msg: fmt.Sprintf(format, a...)}}
}

func (c *compiler) compile() (*Generator, error) {
	c.seqs, c.exprs = c.o.registry.snapshot()
	for name := range c.o.exprs {
		if _, ok := c.o.seqs[name]; ok {
			return nil, fmt.Errorf("%w: %q given both as a sequence and as an expression", ErrTemplate, name)
		}
	}
	for name, g := range c.o.seqs {
		if _, ok := c.exprs[name]; ok {
			return nil, fmt.Errorf("%w: WithSequence(%q): the registry has an expression of that name", ErrTemplate, name)
		}
		c.seqs[name] = g
	}
	for name, f := range c.o.exprs {
		if _, ok := c.seqs[name]; ok {
			return nil, fmt.Errorf("%w: WithExpression(%q): a sequence of that name exists", ErrTemplate, name)
		}
		c.exprs[name] = f
	}
	if len(c.tpl.Nodes) == 0 {
		return nil, c.errAt(0, "empty template")
	}
	for _, n := range c.tpl.Nodes {
		switch n := n.(type) {
		case *parser.Text:
			c.add(expression.Part{Name: "text", Offset: n.Offset, Expr: expression.Text(n.Text), Static: true}, nil, "text")
		case *parser.Dynamic:
			if err := c.dynamic(n); err != nil {
				return nil, err
			}
		}
	}
	if err := c.checkSafety(); err != nil {
		return nil, err
	}
	prog := expression.NewProgram(c.parts, c.tpl.String(), c.o.clock)
	g := &Generator{tpl: c.tpl, prog: prog, kinds: c.kinds, keyBase: c.keyBase}
	if err := g.buildRegexps(c); err != nil {
		return nil, err
	}
	g.prefixes = sync.OnceValue(g.buildPrefixes)
	return g, nil
}

func (c *compiler) add(p expression.Part, d *parser.Dynamic, kind string) {
	c.parts = append(c.parts, p)
	c.nodes = append(c.nodes, d)
	c.kinds = append(c.kinds, kind)
}

func (c *compiler) dynamic(d *parser.Dynamic) error {
	args := expression.Args{}
	for _, a := range d.Args {
		args[a.Key] = a.Value
	}
	part := expression.Part{Name: d.Name, Offset: d.Offset}
	var kind string
	var err error
	if g, ok := c.seqs[d.Name]; ok {
		kind = "sequence"
		part.Expr, err = expression.NewSeq(d.Name, g, args)
	} else if f, ok := c.exprs[d.Name]; ok {
		kind = "expression"
		part.Expr, err = callFactory(f, args)
	} else if _, ok := args["value"]; ok {
		kind = "setter"
		part.Expr, err = expression.NewSetter(d.Name, args)
	} else {
		kind = "variable"
		part.Expr, err = expression.NewVar(d.Name, args)
	}
	if err == nil && part.Expr == nil {
		err = errors.New("factory returned a nil expression")
	}
	if err != nil {
		off := d.NameOffset
		var ae *expression.ArgError
		if errors.As(err, &ae) && ae.Arg != "" {
			if a, ok := d.Arg(ae.Arg); ok {
				off = a.Offset
			}
		}
		return c.errAt(off, "%s: %v", d.Name, err)
	}
	c.add(part, d, kind)
	return nil
}

// callFactory runs a user's factory, turning a panic into an error.
func callFactory(f expression.Factory, args expression.Args) (e expression.Expression, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, fmt.Errorf("%w in factory: %v", ErrPanic, r)
		}
	}()
	return f(args)
}

// checkSafety enforces the rules that keep numbers from repeating, binds
// sequences to their keys and probes check-character algorithms.
func (c *compiler) checkSafety() error {
	var seqs []int
	var dates []*expression.Date
	printed := map[string]int{} // variable name -> part index
	ownerFixed, ownerPerCall := "", false
	for i, p := range c.parts {
		switch e := p.Expr.(type) {
		case *expression.Seq:
			seqs = append(seqs, i)
		case *expression.Date:
			dates = append(dates, e)
		case *expression.Setter:
			printed[e.Name] = i
			if e.Name == expression.OwnerKey {
				ownerFixed = e.Value
			}
		case *expression.Var:
			printed[e.Name] = i
			if e.Name == expression.OwnerKey {
				ownerPerCall = true
			}
		}
	}
	if len(seqs) == 0 {
		return c.errAt(0, "the template has no sequence part (such as @<seq>), so every number would be the same")
	}
	switch {
	case ownerPerCall:
		c.keyBase = ""
	case ownerFixed != "":
		c.keyBase = ownerFixed
	default:
		c.keyBase = c.tpl.String()
	}
	// Variables that partition a counter must be printed, and printed so
	// that two different values can never print alike.
	partition := map[string]bool{}
	if ownerPerCall {
		partition[expression.OwnerKey] = true
	}
	for _, i := range seqs {
		s := c.parts[i].Expr.(*expression.Seq)
		if s.KeyVar != "" {
			a, _ := c.nodes[i].Arg("key")
			pi, ok := printed[s.KeyVar]
			if !ok {
				return c.errAt(a.Offset, "%s: key=%s needs @<%s> printed in the template; otherwise numbers of different %ss would print alike", s.Name, s.KeyVar, s.KeyVar, s.KeyVar)
			}
			if _, isVar := c.parts[pi].Expr.(*expression.Var); isVar {
				partition[s.KeyVar] = true
			}
		}
		var loc *time.Location
		if s.Reset != expression.Never {
			for _, d := range dates {
				if d.Finest() >= s.Reset {
					loc = d.Loc
					break
				}
			}
			if loc == nil {
				a, _ := c.nodes[i].Arg("reset")
				return c.errAt(a.Offset, "%s: reset=%s needs a date printed at least to the %s (such as @<date, format=%s>); otherwise numbers would repeat after each reset",
					s.Name, s.Reset, s.Reset, map[expression.Period]string{expression.Day: "yyyyMMdd", expression.Month: "yyyyMM", expression.Year: "yyyy"}[s.Reset])
			}
		}
		s.Bind(loc, c.keyBase, !ownerPerCall)
	}
	if len(partition) > 0 {
		var seps strings.Builder
		for _, p := range c.parts {
			if t, ok := p.Expr.(expression.Text); ok {
				seps.WriteString(string(t))
			}
		}
		for name := range partition {
			i := printed[name]
			for _, j := range []int{i - 1, i + 1} {
				if j < 0 || j >= len(c.parts) || fixedWidth(c.parts[j].Expr) {
					continue
				}
				return c.errAt(c.parts[i].Offset, "%s is a counter key, so it needs literal text (a separator) or a fixed-width part on each side; otherwise different values could print alike", name)
			}
		}
		if seps.Len() > 0 {
			for _, p := range c.parts {
				if v, ok := p.Expr.(*expression.Var); ok {
					v.Forbid(uniqueRunes(seps.String()))
				}
			}
		}
	}
	return c.probeChecksums(seqs)
}

// fixedWidth reports whether a part always prints the same number of bytes
// and cannot be confused with a variable's text next to it.
func fixedWidth(e expression.Expression) bool {
	switch e := e.(type) {
	case expression.Text, *expression.Setter, *expression.Date, *expression.Checksum, *expression.Random:
		return true
	case *expression.Seq:
		return e.Width > 0 && !e.Grow
	}
	return false
}

func uniqueRunes(s string) string {
	var b strings.Builder
	seen := map[rune]bool{}
	for _, r := range s {
		if !seen[r] {
			seen[r] = true
			b.WriteRune(r)
		}
	}
	return b.String()
}

// probeChecksums computes each checksum over sample text at New, so that an
// algorithm that cannot take the template's text fails here and not at
// Next.
func (c *compiler) probeChecksums(seqs []int) error {
	for i, p := range c.parts {
		k, ok := p.Expr.(*expression.Checksum)
		if !ok {
			continue
		}
		fail := func(err error) error {
			off := c.nodes[i].NameOffset
			if a, ok := c.nodes[i].Arg("algo"); ok {
				off = a.Offset
			}
			return c.errAt(off, "%v", err)
		}
		if !k.All {
			s := c.parts[seqs[len(seqs)-1]].Expr.(*expression.Seq)
			widths := []int{max(s.Width, 1)}
			if s.Width == 0 || s.Grow {
				widths = append(widths, 19)
			}
			for _, w := range widths {
				if _, err := k.Algo.Compute(strings.Repeat("1", w)); err != nil {
					return fail(fmt.Errorf("%w (over=seq, a %d-digit sequence)", err, w))
				}
			}
			continue
		}
		var sample strings.Builder
		for j := 0; j < i; j++ {
			switch e := c.parts[j].Expr.(type) {
			case expression.Text:
				sample.WriteString(string(e))
			case *expression.Setter:
				sample.WriteString(e.Value)
			case *expression.Var, *expression.Random:
				// unknown at New: checked at Next
			default:
				if n := e.MaxLen(); n > 0 {
					sample.WriteString(strings.Repeat("1", n))
				}
			}
		}
		if _, err := k.Algo.Compute(sample.String()); err != nil && !errors.Is(err, checksum.ErrLength) {
			return fail(fmt.Errorf("%w (over=all, the template's text)", err))
		}
	}
	return nil
}

// buildRegexps builds the public pattern (a named group per dynamic part)
// and the internal one (a group per part, for Validate).
func (g *Generator) buildRegexps(c *compiler) error {
	parts := g.prog.Parts()
	used := map[string]int{}
	var pub, priv strings.Builder
	pub.WriteString("^")
	priv.WriteString("^")
	g.groups = make([]string, len(parts))
	g.maxLen = 0
	for i, p := range parts {
		pat := partPattern(p.Expr)
		if _, err := regexp.Compile(pat); err != nil {
			return c.errAt(p.Offset, "%s: Pattern() is not a valid regular expression: %v", p.Name, err)
		}
		if n := p.Expr.MaxLen(); n < 0 || g.maxLen < 0 {
			g.maxLen = -1
		} else {
			g.maxLen += n
		}
		priv.WriteString(fmt.Sprintf("(?<p%d>%s)", i, pat))
		if g.kinds[i] == "text" {
			pub.WriteString(pat)
			continue
		}
		name := groupName(p.Name)
		used[name]++
		if used[name] > 1 {
			name = fmt.Sprintf("%s_%d", name, used[name])
		}
		g.groups[i] = name
		pub.WriteString("(?<" + name + ">" + pat + ")")
	}
	pub.WriteString("$")
	priv.WriteString("$")
	g.pattern = pub.String()
	re, err := regexp.Compile(priv.String())
	if err != nil {
		return c.errAt(0, "the template's parts do not form a valid regular expression: %v", err)
	}
	g.re = re
	g.subexp = make([]int, len(parts))
	for i := range parts {
		g.subexp[i] = re.SubexpIndex(fmt.Sprintf("p%d", i))
	}
	return nil
}

func groupName(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if !('a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9' || ch == '_') {
			b[i] = '_'
		}
	}
	if !utf8.Valid(b) {
		return "part"
	}
	return string(b)
}

package sn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/sngen/sn/internal/engine"
	"github.com/sngen/sn/sequence"
)

// Vars are per-call variables: the values of "@<NAME>" parts.
type Vars map[string]string

// MaxN is the most numbers one [Request] asks for. A larger count is an
// error wrapping [ErrTooMany], returned before anything is drawn.
const MaxN = 100_000

// Generator issues numbers from a compiled template. A Generator is
// immutable and safe for concurrent use by multiple goroutines.
type Generator struct {
	plan    *engine.Plan
	name    string    // see WithName
	issue   IssueFunc // the middleware around draw; draw itself without any
	inner   IssueFunc // issue inside the idempotency link: what Refuse runs
	wrapped bool      // issue is not draw: a panic in it becomes an error
	spare   atomic.Pointer[Batch]
	memos   localMemos // idempotency keys, for a store that does not remember them
	// clockOnly refuses a Request.At: the fr-continuous profile.
	clockOnly bool

	// fallbacks are the Generators a call may issue from instead, through
	// Fallback middlewares, fb's own included: each is proven against g.
	fallbacks []*Generator
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
// here, and every rule that keeps numbers from repeating is checked, so
// that a Generator that compiled never fails for reasons the template could
// have told.
//
// A name in "@<NAME ...>" resolves, in this order, to a sequence (given by
// [WithSequence] or in the registry), an expression factory, or else a
// variable. The errors New returns wrap [ErrTemplate]; errors.As with a
// *parser.Error gives the byte offset of the offending part:
//   - syntax errors;
//   - unknown or bad arguments, unknown algorithms, unknown time zones;
//   - a name that looks like a typo of a registered one ("did you mean
//     date?"): write @<NAME, var> for a variable of that name;
//   - a template with no sequence part (every number would be the same);
//   - reset= without a date printed at least as finely, key=VAR without
//     VAR printed;
//   - a check character the algorithm cannot compute over the template's
//     text;
//   - a template that can print one string for two different counter keys
//     or two different numbers: an *[AmbiguityError] matching
//     [ErrAmbiguous], with a witness.
func New(template string, opts ...Option) (*Generator, error) {
	o, err := newOptions(opts)
	if err != nil {
		return nil, err
	}
	seqs, exprs, err := o.resolve()
	if err != nil {
		return nil, err
	}
	pl, err := engine.Compile(template, engine.Config{Seqs: seqs, Exprs: exprs, Clock: o.clock, Retention: o.retention, Keys: o.keys, Name: o.name, Unissued: o.checkOnly})
	if err != nil {
		return nil, publicError(err)
	}
	g := &Generator{plan: pl, name: o.name}
	if err := g.checkProfiles(o.profiles); err != nil {
		return nil, err
	}
	if err := g.wrap(o.middleware); err != nil {
		return nil, err
	}
	return g, nil
}

// Enroll enrolls the template in the catalog of every store its
// sequences draw from (a *catalog.Catalog: bbolt, the SQL ledger, Redis,
// the memory sequences), so that no template used on one store, in any
// run, process or machine, can print a number another printed for another
// counter or number. The template is proven against every entry of each
// catalog, under the rule [CheckSet] applies to a config file; one that
// collides is refused with an *[AmbiguityError] matching [ErrAmbiguous],
// naming the entry, when it was first used and by whom, with a witness.
// The same template in another spelling finds its entry and continues its
// counter.
//
// The first draw enrolls the template when nothing has; call Enroll at
// start-up to have the refusal then rather than at the first number. It
// enrolls once; after an error it tries again on the next call.
func (g *Generator) Enroll(ctx context.Context) error {
	err := g.plan.Enroll(ctx)
	if err == nil {
		return nil
	}
	if pe := publicError(err); pe != err {
		e := pe.(*AmbiguityError)
		e.Template = g.plan.Source()
		return e
	}
	return err
}

// Floor makes every later number of the template's sequences greater than
// floor, for migrating from another system ("start above the largest
// order number we already have"). A floor never lowers a counter: one at or
// below what was already issued changes nothing.
//
// It needs counters that do not vary per call: a template with key=,
// reset= or a per-call ownerKey has many counters, and Floor returns an
// error wrapping errors.ErrUnsupported without changing anything, as it
// does when a sequence is not a sequence.Floorer. (To raise the counters
// of such a template from its existing numbers, use [Generator.Parse] on
// each and [sequence.Floorer] with the keys it reads; the sn floor command
// does that.)
func (g *Generator) Floor(ctx context.Context, floor int64) error {
	type target struct {
		p   *engine.Part
		fl  sequence.Floorer
		key string
	}
	var ts []target
	parts := g.plan.Parts()
	for i := range parts {
		p := &parts[i]
		if p.Kind != engine.Seq {
			continue
		}
		key, ok := p.FixedKey()
		if !ok {
			return fmt.Errorf("sn: Floor: %s at offset %d: %w: its counter key varies per call (key=, reset= or a per-call ownerKey)", p.Name, p.Offset, errors.ErrUnsupported)
		}
		fl, err := floorerOf(p)
		if err != nil {
			return fmt.Errorf("sn: Floor: %w", err)
		}
		ts = append(ts, target{p, fl, key})
	}
	for _, t := range ts {
		if err := t.p.Bind(ctx); err != nil {
			return fmt.Errorf("sn: Floor: %w", err)
		}
	}
	if err := g.Enroll(ctx); err != nil {
		return fmt.Errorf("sn: Floor: %w", err)
	}
	for _, t := range ts {
		if err := t.fl.Floor(ctx, t.key, floor); err != nil {
			return fmt.Errorf("sn: Floor: %s at offset %d: %w", t.p.Name, t.p.Offset, err)
		}
	}
	return nil
}

// FloorParsed raises the counters that numbers were drawn from — numbers
// read back by [Generator.Parse], say from another system that printed them
// with the same template — so that every later number of each counter is
// greater than the largest of them. It is how a migration continues a
// series whose counter key varies per call (key=, reset=, a per-call
// ownerKey), which [Generator.Floor] cannot do. A floor never lowers a
// counter.
//
// Every sequence involved must be a sequence.Floorer; otherwise FloorParsed
// returns an error wrapping errors.ErrUnsupported and changes nothing. It
// raises each counter once, to the largest number seen for it.
func (g *Generator) FloorParsed(ctx context.Context, ps ...Parsed) error {
	type counter struct {
		offset int
		key    string
	}
	top := map[counter]int64{}
	var order []counter
	for _, p := range ps {
		for _, d := range p.Draws {
			c := counter{d.Offset, d.Key}
			if _, seen := top[c]; !seen {
				order = append(order, c)
			}
			top[c] = max(top[c], d.Seq)
		}
	}
	parts := g.plan.Parts()
	floorers := map[int]sequence.Floorer{}
	for _, c := range order {
		if _, ok := floorers[c.offset]; ok {
			continue
		}
		var part *engine.Part
		for i := range parts {
			if parts[i].Kind == engine.Seq && parts[i].Offset == c.offset {
				part = &parts[i]
			}
		}
		if part == nil {
			return fmt.Errorf("sn: FloorParsed: no sequence part at offset %d of %s", c.offset, g.plan.Source())
		}
		fl, err := floorerOf(part)
		if err != nil {
			return fmt.Errorf("sn: FloorParsed: %w", err)
		}
		if err := part.Bind(ctx); err != nil {
			return fmt.Errorf("sn: FloorParsed: %w", err)
		}
		floorers[c.offset] = fl
	}
	if err := g.Enroll(ctx); err != nil { // after the parts' key checks: another key is ErrKey
		return fmt.Errorf("sn: FloorParsed: %w", err)
	}
	for _, c := range order {
		if err := floorers[c.offset].Floor(ctx, c.key, top[c]); err != nil {
			return fmt.Errorf("sn: FloorParsed: counter %q: %w", c.key, err)
		}
	}
	return nil
}

// String returns the canonical template text: the template with
// whitespace, quoting and argument spelling normalized. It is not the
// counter key; [Generator.Explain] gives that.
func (g *Generator) String() string { return g.plan.String() }

// MaxLen returns the longest number the template can produce, in bytes, or
// -1 when a part is unbounded (a variable without maxlen, a custom part
// without MaxLen). A sequence without width, or with overflow=grow, counts
// as the digits of the largest number, math.MaxInt64, in its radix: 19 in
// decimal, 13 in base 36, 63 with alphabet=01.
func (g *Generator) MaxLen() int { return g.plan.MaxLen() }

// Regexp returns an anchored regular expression that matches the numbers of
// the template, with a named group per dynamic part: the part's name, with
// characters other than letters, digits and "_" replaced by "_", and "_2",
// "_3" added to make names unique. It uses the syntax common to Go (RE2),
// JavaScript (and so most OpenAPI and form validators), Java, .NET and
// PCRE: classes, counted repetition and "(?<name>...)" groups. PostgreSQL
// has no named groups; remove the "?<name>" parts for a CHECK constraint.
// A variable's maxlen counts bytes, the pattern's repetition characters:
// for values beyond ASCII the pattern is looser than the template.
func (g *Generator) Regexp() string { return g.plan.Regexp() }

// Vars returns the sorted names of the per-call variables the template
// reads: those it prints ("@<area>"), ownerKey among them when it is
// printed per call. A variable given to Next that is not one of them is
// ignored by the Generator; sn serve refuses it, as a likely typo.
func (g *Generator) Vars() []string {
	var names []string
	parts := g.plan.Parts()
	for i := range parts {
		if p := &parts[i]; p.Kind == engine.Var && !slices.Contains(names, p.Name) {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	return names
}

// floorerOf returns the Gen of sequence part p as a Floorer, or an error
// wrapping errors.ErrUnsupported that names the part.
func floorerOf(p *engine.Part) (sequence.Floorer, error) {
	fl, ok := p.Gen().(sequence.Floorer)
	if !ok {
		return nil, fmt.Errorf("%s at offset %d: %w: %T cannot raise a floor", p.Name, p.Offset, errors.ErrUnsupported, p.Gen())
	}
	return fl, nil
}

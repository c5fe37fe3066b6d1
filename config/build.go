package config

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/record"
)

// A BuildOption configures [Config.Build].
type BuildOption func(*buildOptions)

type buildOptions struct {
	env Target // Dir, Exact and LockWait of every Target
	sn  []sn.Option
	per []func(name string) []sn.Option // see WithTemplateOptions
}

// WithDir resolves the relative paths of the config (a bolt file's)
// against dir. A program that reads a config file usually passes the
// file's directory, or the directory it keeps its state in.
// default: the current directory.
func WithDir(dir string) BuildOption {
	return func(o *buildOptions) { o.env.Dir = dir }
}

// WithExact makes the backends that reserve numbers in blocks (bolt, sql,
// redis) reserve exactly the numbers each call asks for: one store call
// per call, for one number or a batch. A program that issues a few numbers and exits
// leaves no gap that way, at the cost of a store call per request; the sn
// command sets it. The step settings and queued are then unused;
// fetch_timeout bounds each call.
// default: blocks, served through a sequence.Segment.
func WithExact() BuildOption {
	return func(o *buildOptions) { o.env.Exact = true }
}

// WithLockWait sets how long to wait for a store file that another
// process has open before Build fails; a negative d tries once.
// default: the driver's own (boltseq.DefaultLockTimeout for bolt files).
func WithLockWait(d time.Duration) BuildOption {
	return func(o *buildOptions) { o.env.LockWait = d }
}

// WithOptions compiles every template with opts, such as sn.WithClock or
// sn.WithRegistry; Build adds sn.WithSequence("seq", ...) itself.
// default: none.
func WithOptions(opts ...sn.Option) BuildOption {
	return func(o *buildOptions) { o.sn = append(o.sn, opts...) }
}

// WithTemplateOptions compiles each template with the options f returns
// for its name, after those of [WithOptions]: a metric labelled with the
// template's name (metrics.Metrics.Option), an audit hook per series.
// They are not given to Validate's compilation, so an option a template
// needs to compile at all (a sequence, an expression) belongs in
// WithOptions; Build proves again, on the Generators it built, that no
// two templates print one string.
// default: none.
func WithTemplateOptions(f func(name string) []sn.Option) BuildOption {
	return func(o *buildOptions) { o.per = append(o.per, f) }
}

// Build validates c as [Config.Validate] does, with the templates compiled
// with the options of [WithOptions] and the stores told apart with the
// directory of [WithDir], before it opens any store, and returns a [Set]
// holding a Generator per template. Each template's
// sequence is opened by its backend's [Driver] and bound as "seq"; a store
// that several templates use is opened once. Each template is then
// enrolled in its store's catalog (sn.Generator.Enroll): one that collides
// with a template used on that store before, by this config or another,
// in any run, is refused here. Floors are then raised with
// sn.Generator.Floor.
//
// On error, everything opened so far is closed again. The caller closes
// the Set with [Set.Close].
func (c *Config) Build(ctx context.Context, opts ...BuildOption) (*Set, error) {
	var o buildOptions
	for _, opt := range opts {
		opt(&o)
	}
	keys, _ := c.obfuscation()
	o.sn = append(slices.Clip(o.sn), keys...)
	tpls, errs := c.check(o.env, o.sn)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	s := &Set{gens: make(map[string]*sn.Generator, len(tpls)), seqOf: make(map[string]sequence.Gen, len(tpls)), storeOf: map[string]string{}, tenantOf: map[string]string{}, shares: &shares{vals: map[string]any{}}}
	fail := func(err error) (*Set, error) {
		if cerr := s.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, err
	}
	seen := map[string]checked{} // by the identity of the store opened, the first template on it
	for i, t := range tpls {
		opts := o.sn
		for _, f := range o.per {
			opts = append(slices.Clip(opts), f(t.name)...)
		}
		g, err := s.open(ctx, t, opts)
		if err != nil {
			return fail(&Error{Template: t.name, Err: err})
		}
		tpls[i].gen = g
		s.gens[t.name] = g
		s.names = append(s.names, t.name)
		if err := sameStore(ctx, seen, t, s.seqOf[t.name]); err != nil {
			c.src.locate(err)
			return fail(err)
		}
	}
	if len(o.per) > 0 {
		// The per-template options may change what a template prints:
		// prove again, on the Generators built, that no two collide.
		if errs := checkTenants(tpls); len(errs) > 0 {
			c.src.locate(errs[0]) // checkSet finds one collision, with its witness
			return fail(errs[0])
		}
	}
	return s, nil
}

// sameStore finds the identity of the store t's sequence gen opened, as
// its records keep it (record.Identity: a SQL ledger's, an etcd prefix's,
// a Redis and prefix's, a file's; a Redis in front of a ledger is the
// ledger), and refuses a store that another template reached under
// another spelling (its ID, from the config, differs): one store is spelt
// one way, so that it is opened once, and its templates, and its tenants,
// are checked together. seen holds the templates seen so far, by
// identity. A sequence without records (a balanced one) is not checked.
func sameStore(ctx context.Context, seen map[string]checked, t checked, gen sequence.Gen) *Error {
	if t.plan.members != nil || t.store.ID == "" {
		return nil
	}
	rs := record.Of(gen)
	if rs == nil {
		return nil
	}
	id, err := record.Identity(ctx, rs)
	if err != nil {
		return &Error{Template: t.name, Err: fmt.Errorf("read the identity of its store %s: %w", t.store.ID, err)}
	}
	f, ok := seen[id]
	if !ok {
		seen[id] = t
		return nil
	}
	if f.store.ID == t.store.ID || f.tenant == t.tenant && f.plan.target.Sequence.Backend != t.plan.target.Sequence.Backend {
		// One spelling; or two kinds of one store, as redis and
		// redis-strict share their ranges: both meant.
		return nil
	}
	return &Error{Template: t.name, Field: "store", Err: fmt.Errorf("its store %s%s is the store of template %s, %s%s, spelt another way (both are %s): spell one store one way, so that it is opened once and the templates on it are checked together; two stores, one made by copying the other (a file copied, a dump restored), are refused too, for the copy keeps the identity recorded in it: start the second store empty and raise its counters with floors",
		t.store.ID, spelled(t), f.name, f.store.ID, spelled(f), id)}
}

// open opens t's sequence and compiles t with it.
func (s *Set) open(ctx context.Context, t checked, opts []sn.Option) (*sn.Generator, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	gen, err := s.openPlan(ctx, &t.plan)
	if err != nil {
		return nil, err
	}
	base := []sn.Option{sn.WithName(t.name)}
	if t.profile != "" {
		base = append(base, sn.WithProfile(t.profile))
	}
	g, err := sn.New(t.text, append(append(base, opts...), sn.WithSequence("seq", gen))...)
	if err != nil {
		return nil, err
	}
	s.seqOf[t.name] = gen
	s.storeOf[t.name] = t.store.ID
	s.tenantOf[t.name] = t.tenant
	if err := g.Enroll(ctx); err != nil {
		return nil, err
	}
	if t.floor > 0 {
		if err := g.Floor(ctx, t.floor); err != nil {
			return nil, fmt.Errorf("floor %d: %w", t.floor, err)
		}
	}
	return g, nil
}

// Set is the Generators of a [Config], by template name, built by
// [Config.Build]. Its methods are safe for concurrent use, except that no
// Generator of the Set may be used once Close has been called.
type Set struct {
	gens  map[string]*sn.Generator
	seqOf map[string]sequence.Gen // each template's sequence
	// storeOf is each template's Store.ID: where its numbers are kept
	storeOf  map[string]string
	tenantOf map[string]string // each template's tenant, "" for none
	names    []string
	seqs     []sequence.Gen // opened sequences, in opening order
	shares   *shares        // closed after the sequences
	close    sync.Once
}

// addSeq records g, once however many templates use it.
func (s *Set) addSeq(g sequence.Gen) {
	for _, o := range s.seqs {
		if sequence.Same(o, g) {
			return
		}
	}
	s.seqs = append(s.seqs, g)
}

// Get returns the Generator of the template named name.
func (s *Set) Get(name string) (*sn.Generator, bool) {
	g, ok := s.gens[name]
	return g, ok
}

// Gen returns the sequence.Gen the template named name draws from, as
// its backend opened it, for metrics and monitors to inspect (see
// sequence.Walk). Numbers drawn from it directly are a gap in the
// template's series.
func (s *Set) Gen(name string) (sequence.Gen, bool) {
	g, ok := s.seqOf[name]
	return g, ok
}

// Tenant returns the tenant of the template named name ([Template.Tenant]),
// "" for none.
func (s *Set) Tenant(name string) (string, bool) {
	tn, ok := s.tenantOf[name]
	return tn, ok
}

// StoreID returns the ID of the store of the template named name: where its
// numbers are kept, with passwords hidden, as in [StoreStatus].
func (s *Set) StoreID(name string) (string, bool) {
	id, ok := s.storeOf[name]
	return id, ok
}

// Names returns the sorted names of the templates.
func (s *Set) Names() []string { return slices.Clone(s.names) }

// Close closes, in the reverse order of opening, every sequence of the Set
// that is an io.Closer, then what the drivers shared between templates
// (files, clients; see [Share]), and returns their errors joined. Numbers
// reserved but not issued become gaps. Calling Close again returns an
// error wrapping sequence.ErrClosed, as every Close of sn's does.
func (s *Set) Close() error {
	err := fmt.Errorf("config: Set closed twice: %w", sequence.ErrClosed)
	s.close.Do(func() {
		var errs []error
		for i := len(s.seqs) - 1; i >= 0; i-- {
			if c, ok := s.seqs[i].(io.Closer); ok {
				errs = append(errs, c.Close())
			}
		}
		errs = append(errs, s.shares.close()...)
		err = errors.Join(errs...)
	})
	return err
}

// OpenStore opens the store seq describes, as [Config.Build] would for a
// template of its own, for tools that read a store rather than issue from
// it: its catalog (sn series), its marks. Only the BuildOptions that say
// how to reach it apply ([WithDir], [WithLockWait]). The caller calls
// close when done; it closes the sequence and what its driver opened.
func OpenStore(ctx context.Context, seq Sequence, opts ...BuildOption) (gen sequence.Gen, close func() error, err error) {
	var o buildOptions
	for _, opt := range opts {
		opt(&o)
	}
	if seq.Backend == "" {
		return nil, nil, &Error{Field: "backend", Err: errors.New("no backend: say which store to open")}
	}
	d := lookup(seq.Backend)
	if d == nil {
		return nil, nil, &Error{Field: "backend", Err: fmt.Errorf("backend %q: %s", seq.Backend, unknown(seq.Backend))}
	}
	if errs := seq.problems(""); len(errs) > 0 {
		return nil, nil, errs[0]
	}
	t := o.env
	t.Name, t.Sequence = "store", seq
	if _, err := d.Check(&t); err != nil {
		return nil, nil, err
	}
	s := &Set{gens: map[string]*sn.Generator{}, seqOf: map[string]sequence.Gen{}, storeOf: map[string]string{}, shares: &shares{vals: map[string]any{}}}
	t.shares = s.shares
	gen, err = d.Open(ctx, &t)
	if err == nil && gen == nil {
		err = errors.New("the driver returned a nil sequence")
	}
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("%s store: %w", seq.Backend, err), s.Close())
	}
	s.addSeq(gen)
	return gen, s.Close, nil
}

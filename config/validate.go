package config

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

// Validate checks every template and sequence setting of c without opening
// any store, and returns all the problems it finds, joined, each a
// *[Error] naming the template and the field. Each sequence is checked by
// its backend's [Driver]. Templates are compiled with sn.New given opts
// (as [Config.Build] would, with a placeholder sequence "seq"), so a bad
// template gives its caret excerpt:
//
//	config: template "orders": sn: template: offset 10: seq: unknown argument "widht": did you mean width?
//		SN-@<seq, widht=8>
//		          ^
//
// Validate then checks the templates as a whole with sn.CheckSet: no
// number that one template prints may be printed by another from a
// different counter. Relative paths are resolved against the current
// directory to tell which templates share a store; [Config.Build] checks
// again with the directory given to [WithDir].
func (c *Config) Validate(opts ...sn.Option) error {
	return c.ValidateIn("", opts...)
}

// ValidateIn is [Config.Validate] with relative paths resolved against
// dir, as [Config.Build] with [WithDir](dir) resolves them: a program
// that builds with the config file's directory validates with it too, so
// that two templates whose paths reach one file are caught wherever the
// program runs.
func (c *Config) ValidateIn(dir string, opts ...sn.Option) error {
	keys, _ := c.obfuscation()
	_, errs := c.check(Target{Dir: dir}, append(slices.Clip(opts), keys...))
	return errors.Join(errs...)
}

// StoreInfo describes where the numbers of template name are kept, as
// [Config.Validate] finds it without opening anything: its backend's
// [Driver] Checks it or, for a balanced sequence, each member's does.
// A balanced sequence is Durable when every member is, and NoFloor when
// one is. Relative paths are resolved against the directory of
// [WithDir]. It returns the problems of the template's sequence, each a
// *[Error], joined; the template's text is not checked.
func (c *Config) StoreInfo(name string, opts ...BuildOption) (StoreInfo, error) {
	var o buildOptions
	for _, opt := range opts {
		opt(&o)
	}
	t, ok := c.Templates[name]
	if !ok {
		return StoreInfo{}, &Error{Template: name, Err: errors.New("no such template")}
	}
	seq := c.storeOf(t.Tenant).over(t.Sequence)
	var errs []*Error
	if b := seq.Backend; lookup(b) == nil {
		errs = append(errs, &Error{Template: name, Field: "sequence.backend", Err: fmt.Errorf("sequence.backend %q: %s", b, unknown(b))})
	}
	bad := seq.problems("sequence.")
	for _, e := range bad {
		e.Template = name
	}
	errs = append(errs, bad...)
	_, st, perrs := planSequence(o.env, name, "sequence", t.Sequence, seq, len(errs) == 0)
	errs = append(errs, perrs...)
	all := make([]error, len(errs))
	for i, e := range errs {
		c.src.locate(e)
		all[i] = e
	}
	return st, errors.Join(all...)
}

// checked is one template of a Config that passed every check.
type checked struct {
	name    string
	text    string
	floor   int64
	profile string
	tenant  string
	plan    plan
	store   StoreInfo
	gen     *sn.Generator // compiled against a placeholder sequence; Build puts the one built in its place
}

// check validates c and returns its templates in name order. env gives
// the Targets' Build settings (Dir, Exact, LockWait).
func (c *Config) check(env Target, opts []sn.Option) ([]checked, []error) {
	var errs []*Error
	bad := func(tpl, field string, format string, a ...any) {
		errs = append(errs, &Error{Template: tpl, Field: field, Err: fmt.Errorf(format, a...)})
	}
	var storeBad []*Error
	if b := c.Store.Backend; b != "" && lookup(b) == nil {
		storeBad = append(storeBad, &Error{Field: "store.backend", Err: fmt.Errorf("store.backend %q: %s", b, unknown(b))})
	}
	storeBad = append(storeBad, c.Store.problems("store.")...)
	tenantBad := map[string]bool{} // tenants whose own store is wrong
	for _, tn := range c.TenantNames() {
		at := "tenants." + tn
		if !validName(tn) {
			errs = append(errs, &Error{Field: "tenants", Err: fmt.Errorf("tenant %q: bad name: want letters, digits, \"_\", \"-\" and \".\"", tn)})
		}
		ts := c.Tenants[tn].Store
		var tb []*Error
		if b := ts.Backend; b != "" && lookup(b) == nil {
			tb = append(tb, &Error{Field: at + ".store.backend", Err: fmt.Errorf("%s.store.backend %q: %s", at, b, unknown(b))})
		}
		tb = append(tb, ts.problems(at+".store.")...)
		tenantBad[tn] = len(tb) > 0
		errs = append(errs, tb...)
	}
	errs = append(errs, storeBad...)
	_, keyBad := c.obfuscation()
	errs = append(errs, keyBad...)
	if len(c.Templates) == 0 {
		bad("", "templates", "no templates")
	}
	var out []checked
	// read holds, by tenant, the fields of its store's Options that some
	// template's backend reads.
	read := map[string]map[string]bool{"": {}}
	for tn := range c.Tenants {
		read[tn] = map[string]bool{}
	}
	var backends []string // the templates' backends
	for _, name := range c.Names() {
		n0 := len(errs)
		t := c.Templates[name]
		if !validName(name) {
			bad(name, "", "bad name: want letters, digits, \"_\", \"-\" and \".\"")
		}
		if _, ok := c.Tenants[t.Tenant]; t.Tenant != "" && !ok {
			known := "none are declared: add it under tenants"
			if len(c.Tenants) > 0 {
				known = "declared: " + strings.Join(c.TenantNames(), ", ") + didYouMean(t.Tenant, c.TenantNames())
			}
			bad(name, "tenant", "tenant %q: no such tenant (%s)", t.Tenant, known)
			continue
		}
		own := t.Sequence
		seq := c.storeOf(t.Tenant).over(own)
		var ownBad []*Error
		if b := own.Backend; b != "" && lookup(b) == nil {
			ownBad = append(ownBad, &Error{Field: "sequence.backend", Err: fmt.Errorf("sequence.backend %q: %s", b, unknown(b))})
		}
		ownBad = append(ownBad, own.problems("sequence.")...)
		if len(ownBad) == 0 && len(storeBad) == 0 && !tenantBad[t.Tenant] {
			ownBad = seq.problems("sequence.") // a field against the store's
		}
		for _, e := range ownBad {
			e.Template = name
			errs = append(errs, e)
		}
		tenv := env
		tenv.Tenant = t.Tenant
		tenv.Profile = t.Profile
		p, store, perrs := planSequence(tenv, name, "sequence", own, seq, len(ownBad) == 0 && len(storeBad) == 0 && !tenantBad[t.Tenant])
		errs = append(errs, perrs...)
		if b := backendOf(seq); !slices.Contains(backends, b) {
			backends = append(backends, b)
		}
		for _, k := range store.Fields {
			if _, set := own.Options[k]; !set {
				read[t.Tenant][k] = true
			}
		}
		if t.Floor < 0 {
			bad(name, "floor", "floor %d: want 0 (none) or more", t.Floor)
		}
		if strings.TrimSpace(t.Template) == "" {
			bad(name, "template", "template: missing")
			continue
		}
		popts := slices.Clip(opts)
		if t.Profile != "" {
			if !slices.Contains(sn.Profiles, t.Profile) {
				bad(name, "profile", "profile %q: want one of %s", t.Profile, strings.Join(sn.Profiles, ", "))
				continue
			}
			if t.Profile == "in-gst" { // the others need the sequence Build makes
				popts = append(popts, sn.WithProfile(t.Profile))
			}
			if tenv.Gapless() {
				if err := gaplessStore(t.Profile, seq, store); err != nil {
					errs = append(errs, &Error{Template: name, Field: "profile", Err: err})
					continue
				}
			}
		}
		g, err := sn.New(t.Template, append(popts, sn.WithSequence("seq", sequence.NewMemory()))...)
		if err != nil {
			field := "template"
			if errors.Is(err, sn.ErrProfile) {
				field = "profile"
			}
			errs = append(errs, &Error{Template: name, Field: field, Err: err})
			continue
		}
		if !drawsSeq(g) {
			bad(name, "template", "template %q: no @<seq> part; a configured template takes its numbers from the sequence seq", t.Template)
			continue
		}
		// The placeholder counts in memory and can raise a floor: Floor
		// fails only for a counter key that varies per call.
		if t.Floor > 0 {
			if err := g.Floor(context.Background(), t.Floor); err != nil {
				errs = append(errs, &Error{Template: name, Field: "floor", Err: fmt.Errorf("floor: %w", err)})
			}
		}
		if t.Floor > 0 && store.NoFloor {
			errs = append(errs, &Error{Template: name, Field: "floor", Err: fmt.Errorf("floor %d: the %s backend cannot raise a floor (its numbers are not drawn from a counter)", t.Floor, backendOf(seq))})
		}
		if len(errs) == n0 && (p.driver != nil || p.members != nil) {
			out = append(out, checked{name: name, text: t.Template, floor: t.Floor, profile: t.Profile, tenant: t.Tenant, plan: p, store: store, gen: g})
		}
	}
	errs = append(errs, c.unread(env, read, backends)...)
	errs = append(errs, apart(out)...)
	errs = append(errs, checkTenants(out)...)
	var all []error
	seen := map[string]bool{} // the store's errors, which each of its templates finds
	for _, e := range errs {
		if e.Template == "" {
			if key := e.Field + "\x00" + e.Err.Error(); seen[key] {
				continue
			} else {
				seen[key] = true
			}
		}
		c.src.locate(e)
		all = append(all, e)
	}
	return out, all
}

// drawsSeq reports whether a sequence part of g is named seq.
func drawsSeq(g *sn.Generator) bool {
	return slices.ContainsFunc(g.Explain().Parts, func(p sn.PartInfo) bool {
		return p.Kind == "sequence" && p.Name == "seq"
	})
}

// driverErrors turns the error of a Driver's Check on template name into
// Errors naming the template and the field as spelt in a file, under at
// ("sequence", "sequence.balanced.members[1]").
func driverErrors(name, at, backend string, err error) []*Error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*Error); ok {
		e2 := &Error{Template: name, Field: at, Err: fmt.Errorf("%s: %w", at, e.Err)}
		if e.Field != "" {
			e2.Field = at + "." + e.Field
			e2.Err = fmt.Errorf("%s.%s: %w", at, e.Field, e.Err)
		}
		return []*Error{e2}
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*Error
		for _, e := range j.Unwrap() {
			out = append(out, driverErrors(name, at, backend, e)...)
		}
		return out
	}
	if at != "sequence" {
		err = fmt.Errorf("%s: %s sequence: %w", at, backend, err)
	} else {
		err = fmt.Errorf("%s sequence: %w", backend, err)
	}
	return []*Error{{Template: name, Field: at, Err: err}}
}

// backendOf names the backend of seq for a message: its members' when it
// is balanced.
func backendOf(seq Sequence) string {
	if seq.Balanced == nil {
		return seq.Backend
	}
	var names []string
	for _, m := range seq.Balanced.Members {
		if b := cmp.Or(m.Backend, seq.Backend); !slices.Contains(names, b) {
			names = append(names, b)
		}
	}
	return "balanced " + strings.Join(names, ", ")
}

// unread reports each field of the store, or of a tenant's store, that
// neither its backend nor a template's reads, such as a misspelt field.
// read holds, by tenant, the fields the templates' backends read.
func (c *Config) unread(env Target, read map[string]map[string]bool, backends []string) []*Error {
	if len(c.Templates) == 0 {
		return nil
	}
	var errs []*Error
	for _, tn := range append([]string{""}, c.TenantNames()...) {
		seq, at, set := c.Store, "store.", c.Store.Options
		if tn != "" {
			seq, at, set = c.storeOf(tn), "tenants."+tn+".store.", c.Tenants[tn].Store.Options
		}
		if d := lookup(seq.Backend); d != nil && slices.ContainsFunc(slices.Collect(maps.Keys(set)), func(k string) bool { return !read[tn][k] }) {
			// The store's own backend reads its fields too, whether or
			// not a template uses it.
			own := env
			own.Name, own.Sequence, own.shares = "", seq.over(Sequence{}).bare(), nil
			if st, _ := d.Check(&own); true {
				for _, k := range st.Fields {
					read[tn][k] = true
				}
			}
		}
		fields := slices.Sorted(maps.Keys(read[tn]))
		for _, k := range slices.Sorted(maps.Keys(set)) {
			if !read[tn][k] {
				errs = append(errs, &Error{Field: at + k, Err: fmt.Errorf("%s%s: not used by the backend of any template (%s)%s", at, k, strings.Join(backends, "; "), didYouMean(k, fields))})
			}
		}
	}
	return errs
}

// apart reports a store that templates of two tenants (or of a tenant
// and of none) share: a tenant's counters, catalog and journal are its
// own.
func apart(ts []checked) []*Error {
	var errs []*Error
	first := map[string]checked{} // by store ID, the first template to use it
	for _, t := range ts {
		ids := []string{t.store.ID}
		if t.plan.members != nil {
			ids = t.plan.stores // the members' stores, but those of a member's own
		}
		for _, id := range ids {
			if id == "" { // a store of the template's own
				continue
			}
			f, seen := first[id]
			if !seen {
				first[id] = t
				continue
			}
			if f.tenant == t.tenant {
				continue
			}
			whose := func(t checked) string {
				if t.tenant == "" {
					return "template " + t.name + " (of no tenant)"
				}
				return "template " + t.name + " of tenant " + t.tenant
			}
			errs = append(errs, &Error{Template: t.name, Field: "tenant", Err: fmt.Errorf("its store %s%s is that of %s%s: tenants share no store, so that one's numbers tell nothing of another's; give tenant %s a store of its own in tenants.%s.store (a table, key prefix, path or etcd prefix)", id, spelled(t), whose(f), spelled(f), cmp.Or(t.tenant, f.tenant), cmp.Or(t.tenant, f.tenant))})
			break
		}
	}
	return errs
}

// spelled says how t's config spells where its store is (its path,
// endpoints, table or prefix: never a DSN or URL, which may hold a
// password), for an error that tells two spellings of one store apart:
// " (path \"r5.db\")", or "" for a balanced sequence.
func spelled(t checked) string {
	if t.plan.members != nil {
		return ""
	}
	var parts []string
	for _, k := range []string{"path", "endpoints", "table", "prefix"} {
		if v, ok := t.plan.target.Sequence.Options[k]; ok {
			parts = append(parts, fmt.Sprintf("%s %q", k, fmt.Sprint(v)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// checkTenants proves, tenant by tenant, that no two templates print
// one string (checkSet): tenants keep their numbers apart.
func checkTenants(ts []checked) []*Error {
	var errs []*Error
	by := map[string][]checked{}
	var order []string
	for _, t := range ts {
		if _, ok := by[t.tenant]; !ok {
			order = append(order, t.tenant)
		}
		by[t.tenant] = append(by[t.tenant], t)
	}
	for _, tn := range order {
		errs = append(errs, checkSet(by[tn])...)
	}
	return errs
}

// checkSet checks the templates as a whole with sn.CheckSet, and names
// the first template of an ambiguous pair.
func checkSet(ts []checked) []*Error {
	ms := make([]sn.Member, len(ts))
	for i, t := range ts {
		id := t.store.ID
		if id == "" { // a store of the template's own
			id = t.plan.target.Sequence.Backend + " template " + t.name
		}
		ms[i] = sn.Member{Name: t.name, Gen: t.gen, Store: id}
	}
	err := sn.CheckSet(ms)
	if err == nil {
		return nil
	}
	var ae *sn.AmbiguityError
	if errors.As(err, &ae) && ae.Witness.A.Template != "" {
		return []*Error{{Template: ae.Witness.A.Template, Field: "template", Err: err}}
	}
	return []*Error{{Field: "templates", Err: err}}
}

// gaplessStore returns why seq, whose store is st, cannot serve a
// template of profile (gapless or fr-continuous), or nil.
func gaplessStore(profile string, seq Sequence, st StoreInfo) error {
	const how = "a gapless series draws each number in a transaction of a SQL ledger: backend: sql, with ledger: postgres://... or mysql://... (import _ \"github.com/sngen/sn/backend/sql\"), one transaction per request"
	switch {
	case seq.Balanced != nil:
		return fmt.Errorf("%w %s: a balanced sequence interleaves the numbers of its members, and a member that fails leaves gaps; %s", sn.ErrProfile, profile, how)
	case seq.Queued != nil:
		return fmt.Errorf("%w %s: a queued sequence draws ahead of its calls, and what it drew is a gap when the process ends; drop queued: %s", sn.ErrProfile, profile, how)
	case !st.Gapless:
		return fmt.Errorf("%w %s: backend %s issues from blocks or a cache, which can leave gaps when a process ends; %s", sn.ErrProfile, profile, backendOf(seq), how)
	}
	return nil
}

package config

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"reflect"
	"slices"
	"strings"

	"github.com/sngen/sn/parser"
	"github.com/sngen/sn/sequence"
)

// This file turns a template's effective sequence into a plan: the store
// its driver opens, or a sequence.Balanced of member stores, each perhaps
// behind a sequence.Queued. Check builds the plan without opening
// anything; Build opens it.

// plan is how one sequence is opened: a store from its driver, or, when
// members is not nil, a Balanced of the members.
type plan struct {
	field   string // the sequence as an Error names it: "sequence", "sequence.balanced.members[1]"
	target  Target // the bare sequence the driver opens
	driver  Driver
	queued  *sequence.QueuedOptions // a queue in front of the store, or nil
	members []plan
	stores  []string // with members, the IDs of those of their stores that have one (a store of a member's own has none)
	opts    sequence.BalancedOptions
}

// configFields are the fields of a Sequence that package config reads
// itself, whatever the backend.
var configFields = []string{"backend", "queued", "balanced"}

// planSequence checks seq, the effective sequence of template name, of
// which own is what the template (or a member) sets itself, and plans it.
// at names seq in errors ("sequence"); env gives the Build settings.
// clean says that the values of own and of the store were found right,
// so that seq's values are checked against each other. The StoreInfo it
// returns describes where the numbers are kept, even with errors.
func planSequence(env Target, name, at string, own, seq Sequence, clean bool) (plan, StoreInfo, []*Error) {
	p := plan{field: at}
	if seq.Balanced == nil {
		return planStore(env, name, at, own, seq)
	}
	var errs []*Error
	base := seq
	base.Balanced = nil
	var stores []StoreInfo
	var used []string // the fields that some member's backend reads
	first := map[string]int{}
	for i, m := range seq.Balanced.Members {
		mat := fmt.Sprintf("%s.balanced.members[%d]", at, i)
		if m.Balanced != nil {
			continue // problems reported it
		}
		if b := m.Backend; b != "" && lookup(b) == nil {
			errs = append(errs, &Error{Template: name, Field: mat + ".backend", Err: fmt.Errorf("%s.backend %q: %s", mat, b, unknown(b))})
			continue
		}
		mseq := base.over(m)
		if clean {
			if bad := mseq.problems(mat + "."); len(bad) > 0 {
				for _, e := range bad {
					e.Template = name
				}
				errs = append(errs, bad...)
				continue
			}
		}
		mp, st, merrs := planStore(env, name, mat, m, mseq)
		errs = append(errs, merrs...)
		if len(merrs) > 0 || mp.driver == nil { // an unknown backend of the store's or the template's is reported with it
			continue
		}
		if n := len(seq.Balanced.Members); st.Bits > 0 && st.Bits+bits.Len(uint(n-1)) > 63 {
			errs = append(errs, &Error{Template: name, Field: mat, Err: fmt.Errorf(
				"%s: the %s backend's numbers take up to %d bits, and the index of %d members takes %d more of the 63 a number has: give the member a layout of at most %d bits",
				mat, mseq.Backend, st.Bits, n, bits.Len(uint(n-1)), 63-bits.Len(uint(n-1)))})
			continue
		}
		if st.ID != "" {
			if j, dup := first[st.ID]; dup {
				errs = append(errs, &Error{Template: name, Field: mat, Err: fmt.Errorf(
					"%s: the same store as %s.balanced.members[%d] (%s): members fail over to one another, so each must be a store of its own", mat, at, j, st.ID)})
				continue
			}
			first[st.ID] = i
			p.stores = append(p.stores, st.ID)
		} else {
			st.ID = fmt.Sprintf("%s template %s member %d", mseq.Backend, name, i) // a store of the member's own
		}
		for _, f := range st.Fields {
			if !slices.Contains(used, f) {
				used = append(used, f)
			}
		}
		stores = append(stores, st)
		p.members = append(p.members, mp)
	}
	st := StoreInfo{Durable: true}
	ids := make([]string, len(stores))
	for i, m := range stores {
		ids[i] = m.ID
		st.Durable = st.Durable && m.Durable
		st.NoFloor = st.NoFloor || m.NoFloor
	}
	st.ID = "balanced [" + strings.Join(ids, "; ") + "]"
	st.Fields = used
	if len(errs) > 0 || len(p.members) != len(seq.Balanced.Members) || len(p.members) == 0 {
		p.members = nil // a plan of no use
		return p, st, errs
	}
	for _, f := range own.fields() {
		if !slices.Contains(configFields, f) && !slices.Contains(used, f) {
			errs = append(errs, &Error{Template: name, Field: at + "." + f, Err: fmt.Errorf("%s.%s: not used by the backend of any member%s", at, f, didYouMean(f, used))})
		}
	}
	p.opts = seq.Balanced.options()
	return p, st, errs
}

// planStore checks and plans seq, a sequence that is not balanced.
func planStore(env Target, name, at string, own, seq Sequence) (plan, StoreInfo, []*Error) {
	p := plan{field: at, target: env}
	p.target.Name, p.target.Sequence, p.target.shares = name, seq.bare(), nil
	p.driver = lookup(seq.Backend)
	if p.driver == nil {
		return p, StoreInfo{}, nil // reported with the backend's field
	}
	st, err := p.driver.Check(&p.target)
	var errs []*Error
	for _, f := range own.fields() {
		if !slices.Contains(configFields, f) && !slices.Contains(st.Fields, f) {
			errs = append(errs, &Error{Template: name, Field: at + "." + f, Err: fmt.Errorf("%s.%s: not used by the %s backend%s", at, f, seq.Backend, didYouMean(f, st.Fields))})
		}
	}
	if at == "sequence" {
		err = storeErrors(err, own, seq, &errs)
	}
	errs = append(errs, driverErrors(name, at, seq.Backend, err)...)
	if seq.Queued != nil && !env.Exact {
		o := seq.Queued.options()
		p.queued = &o
	}
	return p, st, errs
}

// openPlan opens the sequence p plans, recording in s each Gen it opens,
// so that Close closes a queue before its store and a Balanced before its
// members.
func (s *Set) openPlan(ctx context.Context, p *plan) (sequence.Gen, error) {
	if p.members != nil {
		gens := make([]sequence.Gen, len(p.members))
		for i := range p.members {
			g, err := s.openPlan(ctx, &p.members[i])
			if err != nil {
				return nil, err
			}
			gens[i] = g
		}
		b, err := sequence.NewBalanced(gens, p.opts)
		if err != nil {
			return nil, err
		}
		s.addSeq(b)
		return b, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.target.shares = s.shares
	backend := p.target.Sequence.Backend
	gen, err := p.driver.Open(ctx, &p.target)
	if err == nil && gen == nil {
		err = errors.New("the driver returned a nil sequence")
	}
	if err != nil {
		if p.field != "sequence" {
			return nil, fmt.Errorf("%s: %s sequence: %w", p.field, backend, err)
		}
		return nil, fmt.Errorf("%s sequence: %w", backend, err)
	}
	s.addSeq(gen)
	if p.queued != nil {
		q, err := sequence.NewQueued(gen, *p.queued)
		if err != nil {
			return nil, err
		}
		s.addSeq(q)
		gen = q
	}
	return gen, nil
}

// storeErrors moves to *errs the Errors of err, a Driver's Check of a
// template's sequence seq, that are about a field of seq's Options the
// template does not set itself (own): a field of the store, which they
// name. It returns the rest.
func storeErrors(err error, own, seq Sequence, errs *[]*Error) error {
	if err == nil {
		return nil
	}
	e, ok := err.(*Error)
	if j, join := err.(interface{ Unwrap() []error }); join && !ok {
		var rest []error
		for _, e := range j.Unwrap() {
			if e := storeErrors(e, own, seq, errs); e != nil {
				rest = append(rest, e)
			}
		}
		return errors.Join(rest...)
	}
	if !ok || e.Field == "" || !errors.Is(e.Err, errFieldType) {
		return err // a value of the store's can be right for one template and wrong for another
	}
	_, inStore := seq.Options[e.Field]
	if _, set := own.Options[e.Field]; !inStore || set {
		return err
	}
	*errs = append(*errs, &Error{Field: "store." + e.Field, Err: fmt.Errorf("store.%s: %w", e.Field, e.Err)})
	return nil
}

// didYouMean suggests, for a field that a backend does not read, the
// field of Sequence or of fields it is most likely a typo of.
func didYouMean(field string, fields []string) string {
	known := append(fieldNames(reflect.TypeFor[Sequence]()), fields...)
	if slices.Contains(known, field) {
		return "" // a field, just not this backend's
	}
	if best := parser.Closest(field, known); best != "" {
		return fmt.Sprintf("; did you mean %s?", best)
	}
	return ""
}

package sn

import (
	"errors"
	"fmt"

	"github.com/sngen/sn/internal/engine"
)

// Member is one template of a set checked by [CheckSet].
type Member struct {
	// Name names the template in errors (its name in a config file).
	Name string
	// Gen is the compiled template.
	Gen *Generator
	// Store identifies where the member's counters live: members with equal
	// Store share counters (one key is one counter), members with
	// different Store never do.
	Store string
}

// CheckSet returns nil when no number printed by one member can be printed
// by another from a different counter or as a different number. Templates
// on different stores must print disjoint sets of numbers (the same key in
// two stores is two counters); templates on one store may share a counter
// only when they read its key and number from the same places. Otherwise
// the error is an *[AmbiguityError] matching [ErrAmbiguous] that names
// both members (Witness.A.Template and Witness.B.Template).
//
// Config loaders call it on every template they build, so that tidying a
// file can never make two templates print one number.
func CheckSet(members []Member) error {
	ms := make([]engine.Member, len(members))
	for i, m := range members {
		if m.Gen == nil {
			return fmt.Errorf("sn: CheckSet: member %q has no Generator", m.Name)
		}
		ms[i] = engine.Member{Name: m.Name, Plan: m.Gen.plan, Store: m.Store}
	}
	err := engine.CheckSet(ms)
	if err == nil {
		return nil
	}
	var se *engine.SetError
	var a *engine.Ambiguity
	if !errors.As(err, &se) || !errors.As(err, &a) {
		return err
	}
	e := publicError(err).(*AmbiguityError)
	for _, m := range members {
		if m.Name == se.A {
			e.Template = m.Gen.plan.Source()
		}
	}
	return e
}

package sn

import (
	"fmt"
	"sort"
	"sync"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/parser"
	"github.com/sngen/sn/sequence"
)

// Registry maps template names to sequence generators and expression
// factories, in the manner of database/sql's driver registry. A name is
// either a sequence or an expression, never both. A Registry is safe for
// concurrent use.
//
// Most programs use the default registry through [RegisterSequence] and
// [RegisterExpression]; [WithRegistry] gives a Generator its own.
type Registry struct {
	mu    sync.RWMutex
	seqs  map[string]sequence.Gen
	exprs map[string]expression.Factory
}

// NewRegistry returns a registry holding the built-in expressions date,
// checksum and random, and no sequence.
func NewRegistry() *Registry {
	return &Registry{
		seqs: map[string]sequence.Gen{},
		exprs: map[string]expression.Factory{
			"date":     expression.NewDate,
			"checksum": expression.NewChecksum,
			"random":   expression.NewRandom,
		},
	}
}

var defaultRegistry = NewRegistry()

// DefaultRegistry returns the registry that [New] uses unless [WithRegistry]
// says otherwise. It holds the built-in expressions date, checksum and
// random, and no sequence: a template's sequences are always given by
// name, with [WithSequence] or [RegisterSequence] (sequence.NewMemory() in
// tests, a durable store for real numbers), so that no number comes from
// a counter nobody chose.
func DefaultRegistry() *Registry { return defaultRegistry }

// RegisterSequence makes g available to templates as name in the default
// registry. See [Registry.RegisterSequence].
func RegisterSequence(name string, g sequence.Gen) { defaultRegistry.RegisterSequence(name, g) }

// RegisterExpression makes f available to templates as name in the default
// registry. See [Registry.RegisterExpression].
func RegisterExpression(name string, f expression.Factory) {
	defaultRegistry.RegisterExpression(name, f)
}

// RegisterSequence makes g available to templates as name. It panics if g
// is nil, if name is not a name the template grammar can spell, or if name
// is already registered, as a sequence or as an expression: those are
// programming errors, best found at init time. A name given to one
// Generator with [WithSequence] takes precedence over the registry's.
func (r *Registry) RegisterSequence(name string, g sequence.Gen) {
	if g == nil {
		panic("sn: RegisterSequence " + name + ": nil sequence")
	}
	r.register("RegisterSequence", name, func() { r.seqs[name] = g })
}

// RegisterExpression makes f available to templates as name. It panics, as
// [Registry.RegisterSequence] does, if f is nil, if name is not a name the
// grammar can spell, or if name is already registered.
func (r *Registry) RegisterExpression(name string, f expression.Factory) {
	if f == nil {
		panic("sn: RegisterExpression " + name + ": nil factory")
	}
	r.register("RegisterExpression", name, func() { r.exprs[name] = f })
}

// register runs add under the lock once name is known to be free.
func (r *Registry) register(fn, name string, add func()) {
	if !parser.IsName(name) {
		panic(fmt.Sprintf("sn: %s(%q): not a valid template name", fn, name))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.exprs[name]; dup {
		panic(fmt.Sprintf("sn: %s(%q): already registered as an expression", fn, name))
	}
	if _, dup := r.seqs[name]; dup {
		panic(fmt.Sprintf("sn: %s(%q): already registered as a sequence", fn, name))
	}
	add()
}

// Sequences returns the sorted names of the registered sequences.
func (r *Registry) Sequences() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return sortedKeys(r.seqs)
}

// Expressions returns the sorted names of the registered expressions.
func (r *Registry) Expressions() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return sortedKeys(r.exprs)
}

func sortedKeys[V any](m map[string]V) []string {
	s := make([]string, 0, len(m))
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// snapshot copies the registry's maps, so a Generator is not affected by
// later registrations.
func (r *Registry) snapshot() (map[string]sequence.Gen, map[string]expression.Factory) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	seqs := make(map[string]sequence.Gen, len(r.seqs))
	for k, v := range r.seqs {
		seqs[k] = v
	}
	exprs := make(map[string]expression.Factory, len(r.exprs))
	for k, v := range r.exprs {
		exprs[k] = v
	}
	return seqs, exprs
}

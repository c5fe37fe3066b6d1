package sn

import (
	"fmt"
	"sort"
	"sync"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/builtin"
	"github.com/sngen/sn/parser"
)

// Registry maps template names to expression factories, in the manner of
// database/sql's driver registry: the built-in date, checksum and random,
// and the custom expressions a program registers. Sequences are not
// registered: each Generator is given its own with [WithSequence]. A
// Registry is safe for concurrent use.
//
// Most programs use the default registry through [RegisterExpression];
// [WithRegistry] gives a Generator another.
type Registry struct {
	mu    sync.RWMutex
	exprs map[string]expression.Factory
}

// NewRegistry returns a registry holding the built-in expressions date,
// checksum and random.
func NewRegistry() *Registry {
	return &Registry{
		exprs: map[string]expression.Factory{
			"date":     builtin.NewDate,
			"checksum": builtin.NewChecksum,
			"random":   builtin.NewRandom,
		},
	}
}

var defaultRegistry = NewRegistry()

// DefaultRegistry returns the registry that [New] uses unless [WithRegistry]
// says otherwise: the built-in expressions date, checksum and random, and
// those given to [RegisterExpression].
func DefaultRegistry() *Registry { return defaultRegistry }

// RegisterExpression makes f available to templates as name in the default
// registry. See [Registry.RegisterExpression].
func RegisterExpression(name string, f expression.Factory) {
	defaultRegistry.RegisterExpression(name, f)
}

// RegisterExpression makes f available to templates as name. It panics if
// f is nil, if name is not a name the template grammar can spell, or if
// name is already registered: those are programming errors, best found at
// init time.
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
		panic(fmt.Sprintf("sn: %s(%q): already registered", fn, name))
	}
	add()
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

// snapshot copies the registry's map, so a Generator is not affected by
// later registrations.
func (r *Registry) snapshot() map[string]expression.Factory {
	r.mu.RLock()
	defer r.mu.RUnlock()
	exprs := make(map[string]expression.Factory, len(r.exprs))
	for k, v := range r.exprs {
		exprs[k] = v
	}
	return exprs
}

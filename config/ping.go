package config

import (
	"context"
	"time"

	"github.com/sngen/sn/sequence"
)

// StoreStatus is the answer of one store to [Set.Ping].
type StoreStatus struct {
	// Store says where the numbers are kept: the [StoreInfo] ID of its
	// templates, with passwords hidden.
	Store string
	// Templates are the templates whose numbers come from the store, in
	// name order.
	Templates []string
	// Err is nil when the store answered (see sequence.Pinger).
	Err error
	// Took is how long it took to answer.
	Took time.Duration
}

// Ping asks the store of every template whether it answers, each store
// once, one after another, and returns their answers in the order of
// their first template's name: a readiness check. A store that cannot be
// asked (one in memory) answers. It draws no number.
func (s *Set) Ping(ctx context.Context) []StoreStatus {
	var out []StoreStatus
	var gens []sequence.Gen
	for _, name := range s.names {
		g, id := s.seqOf[name], s.storeOf[name]
		found := false
		for i, o := range gens {
			if (id != "" && out[i].Store == id) || sequence.Same(o, g) {
				out[i].Templates = append(out[i].Templates, name)
				found = true
				break
			}
		}
		if !found {
			gens = append(gens, g)
			out = append(out, StoreStatus{Store: id, Templates: []string{name}})
		}
	}
	for i, g := range gens {
		start := time.Now()
		out[i].Err = sequence.Ping(ctx, g)
		out[i].Took = time.Since(start)
	}
	return out
}

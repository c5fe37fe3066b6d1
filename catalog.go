package sn

import (
	"context"
	"errors"
	"fmt"

	"github.com/sngen/sn/internal/engine"
	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/journal"
)

// Series is a template in a store's catalog (see [Generator.Enroll]), as
// [ReadCatalog] reads it.
type Series struct {
	catalog.Entry
	// Template is the template's canonical text.
	Template string
	// Counters are its sequence parts' counters.
	Counters []Counter
	// Err says why the entry could not be read back; the other fields but
	// Entry are then empty.
	Err error
}

// Counter is one sequence part of a [Series]: its counter key, and how
// far it has gone.
type Counter struct {
	// Part is the sequence part's name, Offset its byte offset in the
	// template.
	Part   string
	Offset int
	// Key is the counter key; when it varies per call, a pattern with what
	// varies in angle brackets ("SN|unit=<unit>|<yyyy-MM-dd>") and Fixed
	// is false.
	Key   string
	Fixed bool
	// Last is the last number reserved for a fixed key (the counter's
	// high-water mark), as the head of its journal keeps it; -1 when it
	// is not known: the key has no journal (nothing was drawn from it, or
	// only before the store kept journals) or the store keeps none.
	Last int64
	// Max is the largest number the part's width prints, 0 for none.
	Max int64
}

// Used returns how much of the part's width Last has used, from 0 to 1,
// or -1 when Last or Max is not known.
func (c Counter) Used() float64 {
	if c.Last < 0 || c.Max <= 0 {
		return -1
	}
	return float64(c.Last) / float64(c.Max)
}

// ReadCatalog returns the templates of cat, oldest first, with their
// counters, and the last number of each counter whose key is fixed, read
// from its journal in the catalog's store. An entry that cannot be read
// back has its Err set.
func ReadCatalog(ctx context.Context, cat *catalog.Catalog) ([]Series, error) {
	es, err := cat.Entries(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Series, 0, len(es))
	for _, e := range es {
		s := Series{Entry: e}
		sp, err := engine.ReadSpec(e.Spec)
		if err == nil {
			var pl *engine.Plan
			if pl, err = engine.Rebuild(sp, nil); err == nil {
				s.Template = pl.String()
				parts := pl.Parts()
				for i := range parts {
					p := &parts[i]
					if p.Kind != engine.Seq {
						continue
					}
					c := Counter{Part: p.Name, Offset: p.Offset, Key: pl.KeyPattern(i), Last: -1, Max: p.MaxSeq()}
					if k, ok := p.FixedKey(); ok {
						c.Key, c.Fixed = k, true
						if h, err := journal.ReadHead(ctx, cat.Records(), k); err == nil && h.Seq > 0 {
							c.Last = h.Mark
						}
					}
					s.Counters = append(s.Counters, c)
				}
			}
		}
		s.Err = err
		out = append(out, s)
	}
	return out, nil
}

// ReadCatalogEntry returns the canonical template text of a catalog
// entry.
func ReadCatalogEntry(e catalog.Entry) (string, error) {
	sp, err := engine.ReadSpec(e.Spec)
	if err != nil {
		return "", err
	}
	return sp.Template, nil
}

// Catalogs returns the catalogs of the stores the Generator draws from:
// every sequence under its sequence parts (see sequence.Walk) that is a
// *catalog.Catalog.
func (g *Generator) Catalogs() []*catalog.Catalog { return g.plan.Catalogs() }

// CheckCatalog proves the template against every entry of cat, as
// [Generator.Enroll] does, and records nothing: nil when it may be
// enrolled, an *[AmbiguityError] otherwise.
func (g *Generator) CheckCatalog(ctx context.Context, cat *catalog.Catalog) error {
	es, err := cat.Entries(ctx)
	if err != nil {
		return err
	}
	if err := g.plan.CheckCatalog(es); err != nil {
		var ce *engine.CatalogError
		if errors.As(err, &ce) {
			if pe := publicError(err); pe != err {
				e := pe.(*AmbiguityError)
				e.Template = g.plan.Source()
				return e
			}
		}
		return fmt.Errorf("sn: %w", err)
	}
	return nil
}

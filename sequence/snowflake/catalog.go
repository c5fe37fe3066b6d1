package snowflake

import (
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/record"
)

// Numbering returns "snowflake " and the layout: ids are not counters, so
// a template drawing ids must print numbers disjoint from those of
// templates drawing counters from the same store (see sequence.Numbering).
func (s *Gen) Numbering() string { return "snowflake " + s.l.String() }

// Records returns the records of the store the Leaser keeps its leases
// in, where the catalog of its series and the claims of idempotency keys
// are kept; nil when it keeps none (a fixed worker).
func (s *Gen) Records() record.Store { return record.Of(s.opts.Leaser) }

var _ sequence.Numbering = (*Gen)(nil)

package snowflake

import (
	"context"
	"errors"
	"time"
)

// Leaser hands out worker ids, so that no two live processes issue with
// one id. Lease takes an id below layout.Workers() that no one holds, for
// ttl. The store keeps, for each id, the bound its holders recorded: no id
// was ever issued at an instant after it, and a Gen that takes the id
// issues only after it. That is what keeps a process that restarts after
// a clock rollback, on this id or another, from issuing an id twice.
//
// The store also records the layout ([Layout.String]) with the first
// lease of its series (a Leaser's name) and refuses a Lease with another
// layout, with an error wrapping [ErrLayout]: two layouts can put the same
// bits in one place (41/2/11 with worker 2 and 41/1/12 with worker 1), so
// their ids would meet.
//
// redisseq.NewLeaser implements it over Redis, sqlseq.NewLeaser over
// PostgreSQL or MySQL.
type Leaser interface {
	Lease(ctx context.Context, layout Layout, ttl time.Duration) (Lease, error)
}

// ErrLayout means a Leaser's series was recorded with another layout: a
// Gen with this one could issue the ids of the Gens that use it. Give
// the new layout a series of its own (the Leaser's name).
var ErrLayout = errors.New("snowflake: the series has another layout")

// Lease is one holding of a worker id.
type Lease interface {
	// Worker returns the id held.
	Worker() int64
	// Bound returns the bound the id's earlier holders recorded, or the
	// zero time.
	Bound() time.Time
	// Renew extends the lease by its ttl and records bound. It returns an
	// error wrapping sequence.ErrLeaseLost when the lease is no longer
	// this holder's.
	Renew(ctx context.Context, bound time.Time) error
	// Release gives the id up, recording bound, which may be lower than
	// the bound recorded before: the holder knows its last id.
	Release(ctx context.Context, bound time.Time) error
}

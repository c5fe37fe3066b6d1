package sqlseq

import (
	"context"
	"fmt"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/snowflake"
)

// Leaser leases snowflake worker ids from the ledger's database: a
// [snowflake.Leaser], the counterpart of redisseq.NewLeaser for
// deployments whose shared store is PostgreSQL or MySQL.
//
// It is the [snowflake.RecordLeaser] over the ledger's records ([Store.Records]):
// each id of a name is a record holding a random token, the holder's; a
// deadline by the database's clock, never a client's; and the bound, the
// last instant its holders may have issued at. Taking, renewing and
// releasing an id are each one transaction that the id's record did not
// change under. The bound is what keeps ids unique across restarts: it is
// as durable as the database's commits (do not turn off PostgreSQL's
// synchronous_commit or InnoDB's innodb_flush_log_at_trx_commit=1 for
// this database), and, like every write of the Store, a commit is
// checked for replication ([Store.CheckReplication]).
//
// An earlier release kept the leases in a table of their own, the
// ledger's name and "_workers": [Store.Migrate] moves them into the
// records, keeping each live lease's deadline and each bound, and puts
// in its place a table that takes no row, so that a process of that
// release still running leases nothing and loses its lease at its next
// renewal (see migrate.go). A Leaser is safe for concurrent use.
type Leaser struct {
	s *Store
	l *snowflake.RecordLeaser
}

// LeaserOptions configure a [Leaser]. The zero value gives the
// defaults.
type LeaserOptions struct {
	// Name tells apart series of ids that may reuse one another's worker
	// ids (two layouts, two services): at most 255 bytes.
	// default: "snowflake".
	Name string
}

// NewLeaser returns a Leaser over the Store's database. A nil s, or a
// Name longer than 255 bytes, is an error wrapping
// [sequence.ErrInvalidArgument].
func NewLeaser(s *Store, o LeaserOptions) (*Leaser, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: sqlseq.NewLeaser with a nil Store", sequence.ErrInvalidArgument)
	}
	if o.Name == "" {
		o.Name = "snowflake"
	}
	l, err := snowflake.NewRecordLeaser(s.Records(), o.Name)
	if err != nil {
		return nil, err
	}
	return &Leaser{s: s, l: l}, nil
}

// Lease takes a free worker id below layout.Workers() for ttl (see
// [snowflake.RecordLeaser.Lease]): one a holder released if there is
// one, else the first free one from a random id on. It returns an error
// wrapping [snowflake.ErrLayout] for a name leased in another layout,
// [sequence.ErrUnavailable] when every id is held (or the database cannot
// be reached), and [sequence.ErrInvalidArgument] for a ttl under 1ms.
func (l *Leaser) Lease(ctx context.Context, layout snowflake.Layout, ttl time.Duration) (snowflake.Lease, error) {
	return l.l.Lease(ctx, layout, ttl)
}

// Records returns the records of the Leaser's ledger (see
// [Store.Records]): the leases, the catalog of its series, and the claims
// of idempotency keys for the ids of a snowflake Gen that leases its
// worker there.
func (l *Leaser) Records() record.Store { return l.s.Records() }

var _ snowflake.Leaser = (*Leaser)(nil)

package sqliteseq

import (
	"context"
	"database/sql"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/record"
)

// The journals are kept in the records by package journal: a change to a
// counter appends its record in the transaction that writes the counter.

// inRecords runs fn over the records in tx (see [record.In]) and applies
// what it wrote there.
func inRecords(ctx context.Context, tx *sql.Tx, fn func(rt *record.Tx) error) error {
	cond, ops, err := record.In(ctx, view{tx}, fn)
	if err != nil || len(ops) == 0 {
		return err
	}
	return apply(ctx, tx, cond, ops)
}

// Journal returns the journals kept in the records (a
// [journal.Holder]).
func (s *Store) Journal() journal.Keeper { return journal.InRecords(s.Records()) }

var (
	_ sequence.Allocator = (*Store)(nil)
	_ journal.Holder     = (*Store)(nil)
	_ sequence.Expirer   = (*Store)(nil)
	_ sequence.Pinger    = (*Store)(nil)
	_ record.Holder      = (*Store)(nil)
)

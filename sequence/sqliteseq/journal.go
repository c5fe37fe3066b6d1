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

// Note appends e to key's journal, in one durable transaction: a
// [journal.Keeper].
func (s *Store) Note(ctx context.Context, key string, e journal.Event) (journal.Event, error) {
	var out journal.Event
	err := s.write(ctx, "note", func(tx *sql.Tx) error {
		return inRecords(ctx, tx, func(rt *record.Tx) (err error) {
			out, err = journal.Note(rt, key, e)
			return err
		})
	})
	return out, journal.Overwrite(key, err)
}

// Events returns up to limit records of key's journal after the record
// after (a [journal.Keeper]).
func (s *Store) Events(ctx context.Context, key string, after int64, limit int) ([]journal.Event, error) {
	return journal.Events(ctx, s.Records(), key, after, limit)
}

// Head returns where key's journal ends (a [journal.Keeper]).
func (s *Store) Head(ctx context.Context, key string) (journal.Head, error) {
	return journal.ReadHead(ctx, s.Records(), key)
}

// Prune replaces the records of key's journal through record p.Seq with
// p, the signed Pruned record that sums them up (a [journal.Pruner]).
func (s *Store) Prune(ctx context.Context, key string, p journal.Event) (journal.Event, error) {
	return journal.Prune(ctx, s.Records(), key, p)
}

var (
	_ sequence.Allocator  = (*Store)(nil)
	_ journal.Keeper      = (*Store)(nil)
	_ journal.Pruner      = (*Store)(nil)
	_ sequence.Expirer    = (*Store)(nil)
	_ sequence.Identifier = (*Store)(nil)
	_ sequence.Pinger     = (*Store)(nil)
	_ record.Holder       = (*Store)(nil)
)

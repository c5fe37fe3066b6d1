package sqlseq

import (
	"context"
	"fmt"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// The journal (see [journal.Keeper]) is kept in the table of records
// by package journal. Every write that changes a key's mark and has a
// record (Allocate, Floor, Return, a gapless draw) locks the key's ledger
// row, changes it, and appends the record and the head, in one
// transaction: no block is reserved without its record.

// NoteAll appends es, records such as [Store.Note] takes (but voids), to
// key's journal in one transaction that locks key's row: for a cache that
// records many at once (redisseq's blocks handed to processes), one round
// of the ledger instead of one per record.
func (s *Store) NoteAll(ctx context.Context, key string, es []journal.Event) ([]journal.Event, error) {
	return s.journaled(ctx, "note", key, func(tx execer, last, journaled int64) (int64, []journal.Event, error) {
		for _, e := range es {
			if e.Kind == journal.Voided {
				return 0, nil, fmt.Errorf("sqlseq: journal of %q: a void is noted alone (Note): %w", key, sequence.ErrInvalidArgument)
			}
			if err := journal.CheckNote(key, e, max(journaled, last)); err != nil {
				return 0, nil, err
			}
		}
		return last, es, nil
	})
}

// Note appends e to key's journal, in a transaction that locks key's
// row: a [journal.Keeper].
func (s *Store) Note(ctx context.Context, key string, e journal.Event) (journal.Event, error) {
	out, err := s.journaled(ctx, "note", key, func(tx execer, last, journaled int64) (int64, []journal.Event, error) {
		return s.noteOp(ctx, tx, key, e, last, journaled)
	})
	if err != nil {
		return journal.Event{}, err
	}
	return out[len(out)-1], nil
}

// noteOp is the change of a note of e, in tx, which holds key's row
// locked: a journaled op.
func (s *Store) noteOp(ctx context.Context, tx execer, key string, e journal.Event, last, journaled int64) (int64, []journal.Event, error) {
	if err := journal.CheckNote(key, e, max(journaled, last)); err != nil {
		return 0, nil, err
	}
	if e.Kind == journal.Voided {
		// A gapless hold voided is a hold no more.
		id := hash(key)
		if _, err := tx.ExecContext(ctx, s.q.deleteHolds, id[:], e.Range.First, e.Range.Last); err != nil {
			return 0, nil, err
		}
		// A void holds: no Return gives the number back. The key's
		// row is locked, so a Return waits for this and sees it.
		if _, ok, err := s.q.floor(ctx, tx, hash(floorKey(key)), floorKey(key), e.Range.Last); err != nil || !ok {
			if err == nil {
				err = fmt.Errorf("%w: table %s: the floor row of key %q belongs to another key", ErrCorrupt, s.table, key)
			}
			return 0, nil, err
		}
	}
	return last, []journal.Event{e}, nil
}

// Events returns up to limit records of key's journal after the record
// after: a [journal.Keeper].
func (s *Store) Events(ctx context.Context, key string, after int64, limit int) ([]journal.Event, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	return journal.Events(ctx, s.Records(), key, after, limit)
}

// Head returns where key's journal ends: a [journal.Keeper].
func (s *Store) Head(ctx context.Context, key string) (journal.Head, error) {
	if err := checkKey(key); err != nil {
		return journal.Head{}, err
	}
	return journal.ReadHead(ctx, s.Records(), key)
}

// Prune replaces the records of key's journal through record p.Seq with
// p, the signed Pruned record that sums them up (a [journal.Keeper]), in
// one transaction that the head and that record did not move under.
func (s *Store) Prune(ctx context.Context, key string, p journal.Event) (journal.Event, error) {
	if err := checkKey(key); err != nil {
		return journal.Event{}, err
	}
	return journal.Prune(ctx, s.Records(), key, p)
}

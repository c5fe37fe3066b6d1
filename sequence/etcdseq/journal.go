package etcdseq

import (
	"context"

	"github.com/sngen/sn/sequence/journal"
)

// The journal (see [journal.Keeper]) is kept in the store's records by
// package journal: the store's keys under its prefix are its records. A
// write that changes a counter and has a record compares the counter's
// and the head's revisions and writes the counter, the records and the
// head in one transaction.

// Note appends e to key's journal: a [journal.Keeper].
func (s *Store) Note(ctx context.Context, key string, e journal.Event) (journal.Event, error) {
	if err := checkKey("Note", key); err != nil {
		return journal.Event{}, err
	}
	out, err := s.journaled(ctx, "Note", key, func(m mark, head journal.Head) (mark, []journal.Event, error) {
		if err := journal.CheckNote(key, e, max(m.high, head.Mark)); err != nil {
			return m, nil, err
		}
		if e.Kind == journal.Voided && m.floor < min(e.Range.Last, m.high) {
			// A void holds: no Return gives the number back.
			m.floor = min(e.Range.Last, m.high)
		}
		return m, []journal.Event{e}, nil
	})
	if err != nil {
		return journal.Event{}, err
	}
	return out[len(out)-1], nil
}

// Events returns up to limit records of key's journal after the record
// after: a [journal.Keeper].
func (s *Store) Events(ctx context.Context, key string, after int64, limit int) ([]journal.Event, error) {
	if err := checkKey("Events", key); err != nil {
		return nil, err
	}
	return journal.Events(ctx, s.Records(), key, after, limit)
}

// Head returns where key's journal ends: a [journal.Keeper].
func (s *Store) Head(ctx context.Context, key string) (journal.Head, error) {
	if err := checkKey("Head", key); err != nil {
		return journal.Head{}, err
	}
	return journal.ReadHead(ctx, s.Records(), key)
}

// Prune replaces the records of key's journal through record p.Seq with
// p, the signed Pruned record that sums them up (a [journal.Keeper]), in
// one transaction that the head and that record did not move under.
func (s *Store) Prune(ctx context.Context, key string, p journal.Event) (journal.Event, error) {
	if err := checkKey("Prune", key); err != nil {
		return journal.Event{}, err
	}
	return journal.Prune(ctx, s.Records(), key, p)
}

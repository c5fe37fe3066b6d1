package sqlseq

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/sngen/sn/sequence"
)

// The journal (see [sequence.Journal]) lives in two tables beside the
// ledger: "<table>_journal", one row per record (id, seq, kind, first_n,
// last_n, at_us, by_name, actor, reason, deadline_us, hash), and
// "<table>_jhead", one row per key with the key, the seq and hash of its
// last record and its mark then. Every write that changes a key's mark
// and has a record (Allocate, Floor, Return, a gapless draw) locks the
// key's ledger row, changes it, and appends the record, in one
// transaction: no block is reserved without its record.

// journaled runs op on key's ledger row, locked, in a transaction, and
// appends the records op returns to key's journal in the same
// transaction. op gets the row's mark and the journal's, and returns the
// row's new mark.
func (s *Store) journaled(ctx context.Context, what, key string, op func(tx execer, last, journaled int64) (next int64, es []sequence.Event, err error)) (out []sequence.Event, err error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	id := hash(key)
	if err := s.ensureRow(ctx, id, key); err != nil {
		return nil, err
	}
	err = s.retry(ctx, what, func() error {
		tx, after, err := s.begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		var k, hb []byte
		var last int64
		var head sequence.Head
		lock := func() error {
			return tx.QueryRowContext(ctx, s.q.lockBoth, id[:]).Scan(&k, &last, &head.Seq, &hb, &head.Mark)
		}
		err = lock()
		if errors.Is(err, sql.ErrNoRows) {
			// Deleted since ensureRow saw it (an expired key): made again.
			if _, err := tx.ExecContext(ctx, s.q.insert, id[:], []byte(key)); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.q.insertHead, id[:], []byte(key), make([]byte, 32)); err != nil {
				return err
			}
			err = lock()
		}
		if err != nil {
			return err
		}
		copy(head.Hash[:], hb)
		if string(k) != key || last < 0 {
			return fmt.Errorf("%w: table %s: the row of key %q holds the key %q and the mark %d", ErrCorrupt, s.table, key, k, last)
		}
		next, es, err := op(tx, last, head.Mark)
		if err != nil {
			return err
		}
		if next != last && (len(es) == 0 || s.q.writeAll == "" && s.q.setBoth == "") {
			if _, err := tx.ExecContext(ctx, s.q.setLast, next, id[:]); err != nil {
				return err
			}
		}
		out, err = s.appendEvents(ctx, tx, head, id, key, last, next, es)
		if err != nil {
			return err
		}
		return s.commit(ctx, tx, after)
	})
	return out, err
}

// appendEvents chains es after the last record of key's journal in tx,
// whose mark went from before to mark, and writes them and the head. The
// caller holds key's ledger row locked in tx.
func (s *Store) appendEvents(ctx context.Context, tx execer, head sequence.Head, id [32]byte, key string, before, mark int64, es []sequence.Event) ([]sequence.Event, error) {
	if len(es) == 0 {
		return nil, nil
	}
	es = append(sequence.Reconcile(head, before), es...)
	by := sequence.ByOf(ctx)
	out := make([]sequence.Event, len(es))
	for i, e := range es {
		e.By = by
		out[i], head = sequence.Chain(head, key, e)
	}
	row := func(e sequence.Event) []any {
		return []any{id[:], e.Seq, e.Kind.String(), e.Range.First, e.Range.Last, e.At.UnixMicro(), e.By, e.Actor, e.Reason, deadlineMicros(e), e.Hash[:]}
	}
	n := len(out)
	if s.q.writeAll != "" {
		// PostgreSQL: the last record, the head and the mark in one
		// statement.
		n--
	}
	for _, e := range out[:n] {
		if _, err := tx.ExecContext(ctx, s.q.addEvent, row(e)...); err != nil {
			return nil, err
		}
	}
	if s.q.writeAll != "" {
		args := append(row(out[n]), []byte(key), mark)
		if _, err := tx.ExecContext(ctx, s.q.writeAll, args...); err != nil {
			return nil, err
		}
		return out, nil
	}
	if s.q.setBoth != "" {
		// MySQL: the mark and the head in one statement; both rows exist
		// (ensureRow, or Gapless.ensure, made them).
		res, err := tx.ExecContext(ctx, s.q.setBoth, mark, head.Seq, head.Hash[:], mark, id[:])
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			return out, err
		}
		// No row changed: the head row is missing (deleted by hand):
		// the mark alone, and the head made again.
		if _, err := tx.ExecContext(ctx, s.q.setLast, mark, id[:]); err != nil {
			return nil, err
		}
	}
	args := []any{id[:], []byte(key), head.Seq, head.Hash[:], mark, head.Seq, head.Hash[:], mark}
	if _, err := tx.ExecContext(ctx, s.q.setHead, args...); err != nil {
		return nil, err
	}
	return out, nil
}

func deadlineMicros(e sequence.Event) int64 {
	if e.Deadline.IsZero() {
		return 0
	}
	return e.Deadline.UnixMicro()
}

// ensureRow makes key's ledger row and journal head exist, with mark 0
// and no record, once per key and Store: the transactions that change
// them then only lock and update them.
func (s *Store) ensureRow(ctx context.Context, id [32]byte, key string) error {
	if _, ok := s.rows.Load(id); ok {
		return nil
	}
	err := s.retry(ctx, "make the row", func() error {
		if _, err := s.db.ExecContext(ctx, s.q.insert, id[:], []byte(key)); err != nil {
			return err
		}
		_, err := s.db.ExecContext(ctx, s.q.insertHead, id[:], []byte(key), make([]byte, 32))
		return err
	})
	if err != nil {
		return err
	}
	s.rows.Store(id, struct{}{})
	return nil
}

func (s *Store) readHead(ctx context.Context, q execer, stmt string, id [32]byte) (sequence.Head, error) {
	var h sequence.Head
	var hb []byte
	err := q.QueryRowContext(ctx, stmt, id[:]).Scan(&h.Seq, &hb, &h.Mark)
	if errors.Is(err, sql.ErrNoRows) {
		return sequence.Head{}, nil
	}
	if err != nil {
		return sequence.Head{}, err
	}
	copy(h.Hash[:], hb)
	return h, nil
}

// NoteAll appends es, records such as [Store.Note] takes (but voids), to
// key's journal in one transaction that locks key's row: for a cache that
// records many at once (redisseq's blocks handed to processes), one round
// of the ledger instead of one per record.
func (s *Store) NoteAll(ctx context.Context, key string, es []sequence.Event) ([]sequence.Event, error) {
	return s.journaled(ctx, "note", key, func(tx execer, last, journaled int64) (int64, []sequence.Event, error) {
		for _, e := range es {
			if e.Kind == sequence.Voided {
				return 0, nil, fmt.Errorf("sqlseq: journal of %q: a void is noted alone (Note): %w", key, sequence.ErrInvalidArgument)
			}
			if err := sequence.CheckNote(key, e, max(journaled, last)); err != nil {
				return 0, nil, err
			}
		}
		return last, es, nil
	})
}

// Note appends e to key's journal, in a transaction that locks key's
// row: a [sequence.Journal].
func (s *Store) Note(ctx context.Context, key string, e sequence.Event) (sequence.Event, error) {
	out, err := s.journaled(ctx, "note", key, func(tx execer, last, journaled int64) (int64, []sequence.Event, error) {
		if err := sequence.CheckNote(key, e, max(journaled, last)); err != nil {
			return 0, nil, err
		}
		if e.Kind == sequence.Voided {
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
		return last, []sequence.Event{e}, nil
	})
	if err != nil {
		return sequence.Event{}, err
	}
	return out[len(out)-1], nil
}

// Events returns up to limit records of key's journal after the record
// after: a [sequence.Journal].
func (s *Store) Events(ctx context.Context, key string, after int64, limit int) ([]sequence.Event, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	var out []sequence.Event
	err := s.retry(ctx, "read the journal", func() error {
		var err error
		out, err = s.readEvents(ctx, s.db, key, after, limit)
		return err
	})
	return out, err
}

// readEvents reads up to limit records of key's journal after record
// after, through q (the pool or a transaction).
func (s *Store) readEvents(ctx context.Context, q querier, key string, after int64, limit int) ([]sequence.Event, error) {
	id := hash(key)
	rows, err := q.QueryContext(ctx, s.q.readEvents, id[:], after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sequence.Event
	for rows.Next() {
		var e sequence.Event
		var kind string
		var at, deadline int64
		var h []byte
		if err := rows.Scan(&e.Seq, &kind, &e.Range.First, &e.Range.Last, &at, &e.By, &e.Actor, &e.Reason, &deadline, &h); err != nil {
			return nil, err
		}
		if e.Kind, err = sequence.ParseEventKind(kind); err != nil {
			return nil, fmt.Errorf("%w: table %s_journal, record %d of key %q: %v", ErrCorrupt, s.table, e.Seq, key, err)
		}
		e.At, e.Deadline = sequence.FromMicros(at), sequence.FromMicros(deadline)
		copy(e.Hash[:], h)
		out = append(out, e)
	}
	return out, rows.Err()
}

// Head returns where key's journal ends: a [sequence.Journal].
func (s *Store) Head(ctx context.Context, key string) (sequence.Head, error) {
	if err := checkKey(key); err != nil {
		return sequence.Head{}, err
	}
	id := hash(key)
	var h sequence.Head
	err := s.retry(ctx, "read the journal's head", func() error {
		var err error
		h, err = s.readHead(ctx, s.db, s.q.readHead, id)
		return err
	})
	return h, err
}

// Prune replaces the records of key's journal through record p.Seq with
// p, the signed Pruned record that sums them up (a [sequence.Pruner]), in
// one transaction that locks key's row and head.
func (s *Store) Prune(ctx context.Context, key string, p sequence.Event) (sequence.Event, error) {
	if err := checkKey(key); err != nil {
		return sequence.Event{}, err
	}
	id := hash(key)
	err := s.retry(ctx, "prune", func() error {
		tx, after, err := s.begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		var k []byte
		var last int64
		if err := tx.QueryRowContext(ctx, s.q.lockRow, id[:]).Scan(&k, &last); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		head, err := s.readHead(ctx, tx, s.q.lockHead, id)
		if err != nil {
			return err
		}
		var at sequence.Event
		if p.Seq >= 1 {
			events, err := s.readEvents(ctx, tx, key, p.Seq-1, 1)
			if err != nil {
				return err
			}
			if len(events) == 1 {
				at = events[0]
			}
		}
		if err := sequence.CheckPrune(key, p, at, head); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q.pruneEvents, id[:], p.Seq); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q.addEvent, id[:], p.Seq, p.Kind.String(), p.Range.First, p.Range.Last,
			p.At.UnixMicro(), p.By, "", p.Reason, int64(0), p.Hash[:]); err != nil {
			return err
		}
		return s.commit(ctx, tx, after)
	})
	return p, err
}

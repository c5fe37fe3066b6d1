package sqlseq

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/record"
)

// A write to a key's ledger row (Allocate, Floor, Return, a gapless
// draw, a note) is one transaction: the row locked, its new mark, and
// the records package journal appends for it (their head and events),
// written together. This file is that transaction: the row's lock, the
// records as it sees them (txRecords) and the statements that write
// them; package journal decides what is written.

// journaled runs op on key's ledger row, locked, in a transaction, and
// appends the records op returns to key's journal in the same
// transaction. op gets the row's mark and the journal's, and returns the
// row's new mark.
func (s *Store) journaled(ctx context.Context, what, key string, op func(tx execer, last, journaled int64) (next int64, es []journal.Event, err error)) (out []journal.Event, err error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if err := s.migrated(ctx); err != nil {
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
		if out, err = s.journaledIn(ctx, tx, after, id, key, op); err != nil {
			return s.syncWait(ctx, after, err)
		}
		return s.commit(ctx, tx, after)
	})
	return out, err
}

// journaledIn is [Store.journaled] in tx, begun and checked (after) by
// the caller, who commits it: key's row exists (ensureRow).
func (s *Store) journaledIn(ctx context.Context, tx *sql.Tx, after after, id [32]byte, key string, op func(tx execer, last, journaled int64) (next int64, es []journal.Event, err error)) (out []journal.Event, err error) {
	var k []byte
	var last int64
	view := &txRecords{s: s, tx: tx}
	lock := func() error {
		if s.dialect != Postgres {
			return tx.QueryRowContext(ctx, s.q.lockRow, id[:]).Scan(&k, &last)
		}
		// PostgreSQL: the row and the journal's head (ensureRow made
		// it) locked and read in one statement; both locked, so that
		// a wait for another writer reads both again. Without a head
		// (deleted by hand), the row alone, and the head read apart.
		// (MariaDB locks every row it reads, and a locking read of
		// a missing head would take a gap lock: two statements.)
		hk := journal.HeadKey(key)
		var hv []byte
		var hver int64
		err := tx.QueryRowContext(ctx, `SELECT l.k, l.last, h.v, h.ver FROM `+s.q.quoted+` l JOIN `+s.kvTable()+` h ON h.k = $2 AND h.ver <> 0 WHERE l.id = $1 FOR UPDATE OF l, h`,
			id[:], []byte(hk)).Scan(&k, &last, &hv, &hver)
		if errors.Is(err, sql.ErrNoRows) {
			view.pre = nil
			return tx.QueryRowContext(ctx, s.q.lockRow, id[:]).Scan(&k, &last)
		}
		if err == nil {
			view.pre = map[string]record.Record{hk: {Key: hk, Value: hv, Version: hver}}
		}
		return err
	}
	err = lock()
	if errors.Is(err, sql.ErrNoRows) {
		// Deleted since ensureRow saw it (an expired key): made again.
		if _, err := tx.ExecContext(ctx, s.q.insert, id[:], []byte(key)); err != nil {
			return nil, err
		}
		err = lock()
	}
	if err != nil {
		return nil, err // the caller explains a wait (syncWait)
	}
	if string(k) != key || last < 0 {
		return nil, fmt.Errorf("%w: table %s: the row of key %q holds the key %q and the mark %d", ErrCorrupt, s.table, key, k, last)
	}
	return s.appendIn(ctx, view, id, key, last, last, func(head journal.Head) (int64, []journal.Event, error) {
		return op(tx, last, head.Mark)
	})
}

// migrated runs the migration ([Store.Migrate]) before the first write
// of a Store whose ledger exists, once: a journal an earlier release kept
// is moved before a record is appended after it. A ledger that does not
// exist is left for Migrate to make; the write then fails on it.
func (s *Store) migrated(ctx context.Context) error {
	if s.kvOK.Load() {
		return nil
	}
	var one int
	if err := s.db.QueryRowContext(ctx, `SELECT 1 FROM `+s.q.quoted+` LIMIT 1`).Scan(&one); noTable(err) {
		return nil
	}
	return s.kvReady(ctx)
}

// appendIn reads the head of key's journal in tx, locked, asks change for
// the key's new mark and the records of its change from before, and
// writes them, the head and the mark (when it is not stored, the mark
// the ledger's row holds) in tx. The caller holds key's ledger row locked
// in tx.
func (s *Store) appendIn(ctx context.Context, view *txRecords, id [32]byte, key string, before, stored int64, change func(head journal.Head) (int64, []journal.Event, error)) (out []journal.Event, err error) {
	next := stored
	tx := view.tx
	cond, ops, err := record.In(ctx, view, func(rt *record.Tx) error {
		head, err := journal.HeadOf(rt, key)
		if err != nil {
			return err
		}
		var es []journal.Event
		if next, es, err = change(head); err != nil {
			return err
		}
		out, err = journal.Append(rt, key, before, next, es...)
		return err
	})
	if err != nil {
		return nil, err
	}
	if next != stored && (len(ops) == 0 || s.dialect != Postgres) {
		if _, err := tx.ExecContext(ctx, s.q.setLast, next, id[:]); err != nil {
			return nil, err
		}
	}
	if len(ops) == 0 {
		return out, nil
	}
	// The records created (each must be absent: no read of them took a
	// lock, which on MySQL would be a gap lock), inserted only where
	// there is none; then the others, and on PostgreSQL the mark, in the
	// same statement.
	created := map[string]bool{}
	for _, c := range cond {
		if c.Version == 0 && !view.read[c.Key] {
			created[c.Key] = true
		}
	}
	var creates, puts []record.Op
	for _, o := range ops {
		if created[o.Key] {
			creates = append(creates, o)
		} else {
			puts = append(puts, o)
		}
	}
	values := func(q *strings.Builder, args []any, ops []record.Op) []any {
		for i, o := range ops {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(" + s.args(len(args), 3) + ")")
			args = append(args, []byte(o.Key), o.Value, rand.Int64N(1<<63-1)+1)
		}
		return args
	}
	t := s.kvTable()
	var q strings.Builder
	var args []any
	if s.dialect == Postgres {
		var with []string
		if next != stored {
			with = append(with, `l AS (UPDATE `+s.q.quoted+` SET last = `+s.args(0, 1)+` WHERE id = `+s.args(1, 1)+`)`)
			args = append(args, next, id[:])
		}
		if len(puts) > 0 {
			var pq strings.Builder
			pq.WriteString(`p AS (INSERT INTO ` + t + ` (k, v, ver) VALUES `)
			args = values(&pq, args, puts)
			pq.WriteString(` ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v, ver = EXCLUDED.ver)`)
			with = append(with, pq.String())
		}
		if len(with) > 0 {
			q.WriteString(`WITH ` + strings.Join(with, ", ") + ` `)
		}
		q.WriteString(`INSERT INTO ` + t + ` (k, v, ver) VALUES `)
		args = values(&q, args, creates)
		q.WriteString(` ON CONFLICT (k) DO NOTHING`)
	} else {
		if len(puts) > 0 {
			var pq strings.Builder
			pq.WriteString(`INSERT INTO ` + t + ` (k, v, ver) VALUES `)
			pargs := values(&pq, nil, puts)
			pq.WriteString(` ON DUPLICATE KEY UPDATE v = VALUES(v), ver = VALUES(ver)`)
			if _, err := tx.ExecContext(ctx, pq.String(), pargs...); err != nil {
				return nil, err
			}
		}
		q.WriteString(`INSERT IGNORE INTO ` + t + ` (k, v, ver) VALUES `)
		args = values(&q, args, creates)
	}
	if len(creates) == 0 {
		return nil, fmt.Errorf("sqlseq: journal of %q: an append that creates no record", key)
	}
	res, err := tx.ExecContext(ctx, q.String(), args...)
	if err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, err
	} else if n != int64(len(creates)) {
		return nil, journal.Overwrite(key, fmt.Errorf("sqlseq: table %s: %d of %d journal records created: %w", t, n, len(creates), record.ErrExists))
	}
	return out, nil
}

// txRecords are the records as a transaction of the Store sees them,
// for [record.In]: a record read is locked until the transaction ends.
type txRecords struct {
	s    *Store
	tx   execer
	read map[string]bool          // the keys read, beside those created
	pre  map[string]record.Record // read with the ledger's row, under its lock
}

func (r *txRecords) Get(ctx context.Context, keys ...string) ([]record.Record, error) {
	out := make([]record.Record, len(keys))
	for i, k := range keys {
		if r.read == nil {
			r.read = map[string]bool{}
		}
		r.read[k] = true
		if p, ok := r.pre[k]; ok {
			out[i] = p
			continue
		}
		out[i] = record.Record{Key: k}
		err := r.tx.QueryRowContext(ctx, `SELECT v, ver FROM `+r.s.kvTable()+` WHERE ver <> 0 AND k = `+r.s.args(0, 1)+` FOR UPDATE`, []byte(k)).Scan(&out[i].Value, &out[i].Version)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
	}
	return out, nil
}

func (txRecords) Scan(context.Context, string, string, int) ([]record.Record, error) {
	return nil, errors.ErrUnsupported
}

func (txRecords) Commit(context.Context, []record.Record, []record.Op) (bool, error) {
	return false, errors.ErrUnsupported
}

func (r *txRecords) Now(ctx context.Context) (time.Time, error) { return r.s.now(ctx) }

// ensureRow makes key's ledger row and journal head exist, with mark 0
// and no record, once per key and Store: the transactions that change
// them then only lock and update them (on MySQL, locking a row that
// exists takes no gap lock; two transactions that lock missing rows and
// then insert them deadlock).
func (s *Store) ensureRow(ctx context.Context, id [32]byte, key string) error {
	if _, ok := s.rows.Load(id); ok {
		return nil
	}
	err := s.retry(ctx, "make the row", func() error {
		if _, err := s.db.ExecContext(ctx, s.q.insert, id[:], []byte(key)); err != nil {
			return err
		}
		return s.ensureHead(ctx, key)
	})
	if err != nil {
		return err
	}
	s.rows.Store(id, struct{}{})
	return nil
}

// ensureHead makes the head record of key's journal exist, empty, unless
// it does: a plain read of the latest committed rows, which waits for no
// lock, and an insert only if it is missing.
func (s *Store) ensureHead(ctx context.Context, key string) error {
	var one int
	err := s.db.QueryRowContext(ctx, `SELECT 1 FROM `+s.kvTable()+` WHERE ver <> 0 AND k = `+s.args(0, 1), []byte(journal.HeadKey(key))).Scan(&one)
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	_, err = s.db.ExecContext(ctx, s.insertIgnore(s.kvTable())+` (k, v, ver) VALUES (`+s.args(0, 3)+`)`+s.onConflictNothing(),
		[]byte(journal.HeadKey(key)), []byte{}, rand.Int64N(1<<63-1)+1)
	return err
}

package sqliteseq

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sngen/sn/sequence/record"
)

// The records (see package record) are the rows of sn_kv: key, value and
// version. The versions come from the row "ver" of sn_meta, raised by
// each write in its transaction, so that none is given twice, even to a
// record deleted and written again; every write of the file is one
// transaction at a time.

// Records returns the file's records: a [record.Store] whose commits are
// transactions of the file, and whose clock is this machine's.
func (s *Store) Records() record.Store { return records{s} }

type records struct{ s *Store }

func (r records) Get(ctx context.Context, keys ...string) ([]record.Record, error) {
	for _, k := range keys {
		if err := record.CheckKey(k); err != nil {
			return nil, err
		}
	}
	var out []record.Record
	err := r.s.read(ctx, "read records", func() (err error) {
		out, err = view{r.s.db}.Get(ctx, keys...)
		return err
	})
	return out, err
}

func (r records) Scan(ctx context.Context, from, to string, limit int) ([]record.Record, error) {
	var out []record.Record
	err := r.s.read(ctx, "scan records", func() (err error) {
		out, err = view{r.s.db}.Scan(ctx, from, to, limit)
		return err
	})
	return out, err
}

func (r records) Commit(ctx context.Context, cond []record.Record, ops []record.Op) (bool, error) {
	if err := record.Check(cond, ops); err != nil {
		return false, err
	}
	err := r.s.write(ctx, "write records", func(tx *sql.Tx) error { return apply(ctx, tx, cond, ops) })
	if errors.Is(err, record.ErrExists) {
		return false, nil // a condition does not hold: rolled back
	}
	return err == nil, err
}

func (r records) Now(ctx context.Context) (time.Time, error) { return r.s.now(ctx) }

// apply checks cond in tx and applies ops; it returns an error wrapping
// record.ErrExists, writing nothing, when a condition does not hold.
func apply(ctx context.Context, tx *sql.Tx, cond []record.Record, ops []record.Op) error {
	got, err := view{tx}.Get(ctx, keys(cond)...)
	if err != nil {
		return err
	}
	for i, c := range cond {
		if got[i].Version != c.Version {
			return fmt.Errorf("sqliteseq: record %.64q changed: %w", c.Key, record.ErrExists)
		}
	}
	puts := int64(0)
	for _, o := range ops {
		if o.Value != nil {
			puts++
		}
	}
	var ver int64 // the last version given before this write
	if puts > 0 {
		err := tx.QueryRowContext(ctx, `UPDATE sn_meta SET value = CAST(value AS INTEGER) + ?
WHERE name = 'ver' AND CAST(CAST(value AS INTEGER) AS TEXT) = value AND CAST(value AS INTEGER) < 9223372036854775807 - ?
RETURNING CAST(value AS INTEGER) - ?`, puts, puts, puts).Scan(&ver)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: the counter of the records' versions (sn_meta's row ver) is gone, not a number, or at its end: reopen the file to restore it", ErrCorrupt)
		}
		if err != nil {
			return err
		}
	}
	for _, o := range ops {
		var err error
		switch {
		case o.Value != nil:
			ver++
			_, err = tx.ExecContext(ctx, `INSERT INTO sn_kv (k, v, ver) VALUES (?, ?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v, ver = excluded.ver`, []byte(o.Key), o.Value, ver)
		case o.End != "":
			_, err = tx.ExecContext(ctx, `DELETE FROM sn_kv WHERE k >= ? AND k < ?`, []byte(o.Key), []byte(o.End))
		default:
			_, err = tx.ExecContext(ctx, `DELETE FROM sn_kv WHERE k = ?`, []byte(o.Key))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func keys(rs []record.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Key
	}
	return out
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// view reads the records through q: the file, or a transaction of it (as
// [record.In] reads them).
type view struct{ q querier }

func (v view) Get(ctx context.Context, keys ...string) ([]record.Record, error) {
	out := make([]record.Record, len(keys))
	for i, k := range keys {
		out[i] = record.Record{Key: k}
		err := v.q.QueryRowContext(ctx, `SELECT v, ver FROM sn_kv WHERE k = ?`, []byte(k)).Scan(&out[i].Value, &out[i].Version)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		if err == nil && out[i].Version < 1 {
			return nil, fmt.Errorf("%w: record %.64q has version %d", ErrCorrupt, k, out[i].Version)
		}
		if err == nil && out[i].Value == nil {
			out[i].Value = []byte{} // an empty value, which exists
		}
	}
	return out, nil
}

func (v view) Scan(ctx context.Context, from, to string, limit int) ([]record.Record, error) {
	q, args := `SELECT k, v, ver FROM sn_kv WHERE k >= ?`, []any{[]byte(from)}
	if to != "" {
		q, args = q+` AND k < ?`, append(args, []byte(to))
	}
	q += ` ORDER BY k`
	if limit > 0 {
		q, args = q+` LIMIT ?`, append(args, limit)
	}
	rows, err := v.q.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []record.Record
	for rows.Next() {
		var k []byte
		var r record.Record
		if err := rows.Scan(&k, &r.Value, &r.Version); err != nil {
			return nil, err
		}
		r.Key = string(k)
		if r.Value == nil {
			r.Value = []byte{}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (view) Commit(context.Context, []record.Record, []record.Op) (bool, error) {
	return false, errors.ErrUnsupported
}

func (view) Now(context.Context) (time.Time, error) { return time.Now(), nil }

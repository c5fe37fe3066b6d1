package sqlseq

import (
	"context"
	"database/sql"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/sngen/sn/sequence/record"
)

// The records (see package record): a table, the ledger's name and "_kv",
// of k (the key's bytes), v (the value) and ver (its version, a random
// positive 63-bit number drawn at each write, so that a key written again
// after a delete has a version nobody read). A row of version 0 is a key
// a commit conditioned on its absence and locked: absent to every read.

// Records returns the database's records: a [record.Store] whose commits
// are transactions checked for replication like every write (see
// [Store.CheckReplication]), and whose clock is the database's.
func (s *Store) Records() record.Store { return records{s: s} }

type records struct {
	s   *Store
	raw bool // the migration's own: does not wait for the migration
	// inTx: a Gapless's records, read and written in the transaction the
	// context carries (WithTx), when it carries one, so that an
	// idempotency key's claim commits or rolls back with the numbers.
	inTx bool
}

// tx returns the transaction r reads and writes in: the context's, for a
// Gapless's records, and otherwise nil.
func (r records) tx(ctx context.Context) *sql.Tx {
	if !r.inTx {
		return nil
	}
	return txOf(ctx)
}

func (s *Store) kvTable() string { return s.table + "_kv" }

// ready waits for the table of records and its migration, unless r is
// the migration's.
func (r records) ready(ctx context.Context) error {
	if r.raw {
		return nil
	}
	return r.s.kvReady(ctx)
}

// createKV is the statement that makes the table of records.
func (s *Store) createKV() string {
	if s.dialect == Postgres {
		return `CREATE TABLE IF NOT EXISTS ` + s.kvTable() + ` (
	k bytea PRIMARY KEY,
	v bytea NOT NULL,
	ver bigint NOT NULL
)`
	}
	return `CREATE TABLE IF NOT EXISTS ` + s.kvTable() + ` (
	k VARBINARY(` + strconv.Itoa(record.MaxKey) + `) NOT NULL PRIMARY KEY,
	v MEDIUMBLOB NOT NULL,
	ver BIGINT NOT NULL
) ENGINE=InnoDB`
}

// args returns n placeholders from the (i+1)th, joined by commas.
func (s *Store) args(i, n int) string {
	var b strings.Builder
	for j := range n {
		if j > 0 {
			b.WriteString(", ")
		}
		if s.dialect == Postgres {
			b.WriteString("$" + strconv.Itoa(i+j+1))
		} else {
			b.WriteString("?")
		}
	}
	return b.String()
}

func keyArgs(keys []string) []any {
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = []byte(k)
	}
	return out
}

func (r records) Get(ctx context.Context, keys ...string) ([]record.Record, error) {
	for _, k := range keys {
		if err := record.CheckKey(k); err != nil {
			return nil, err
		}
	}
	out := make([]record.Record, len(keys))
	for i, k := range keys {
		out[i] = record.Record{Key: k}
	}
	if len(keys) == 0 {
		return out, nil
	}
	if err := r.ready(ctx); err != nil {
		return nil, err
	}
	if !r.raw && r.s.legacyClaims.Load() {
		// A claim an earlier release kept moves in when it is first
		// looked up (see migrate.go).
		for _, k := range keys {
			if strings.HasPrefix(k, "i/") {
				if _, err := r.s.migrateClaim(ctx, k); err != nil {
					return nil, err
				}
			}
		}
	}
	q := `SELECT k, v, ver FROM ` + r.s.kvTable() + ` WHERE ver <> 0 AND k IN (` + r.s.args(0, len(keys)) + `)`
	var from querier = r.s.db
	retry := r.s.retry
	if tx := r.tx(ctx); tx != nil {
		// In the caller's transaction, which a failed statement may
		// have ended: not retried.
		from = tx
		retry = func(ctx context.Context, what string, op func() error) error {
			if err := op(); err != nil {
				return classify(what, r.s.table, err, ctx)
			}
			return nil
		}
	}
	err := retry(ctx, "read records", func() error {
		got, err := r.query(ctx, from, q, keyArgs(keys)...)
		if err != nil {
			return err
		}
		byKey := make(map[string]record.Record, len(got))
		for _, g := range got {
			byKey[g.Key] = g
		}
		for i, k := range keys {
			out[i] = record.Record{Key: k}
			if g, ok := byKey[k]; ok {
				out[i] = g
			}
		}
		return nil
	})
	return out, err
}

func (r records) query(ctx context.Context, q querier, stmt string, args ...any) ([]record.Record, error) {
	rows, err := q.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []record.Record
	for rows.Next() {
		var k, v []byte
		var ver int64
		if err := rows.Scan(&k, &v, &ver); err != nil {
			return nil, err
		}
		if v == nil {
			v = []byte{}
		}
		out = append(out, record.Record{Key: string(k), Value: v, Version: ver})
	}
	return out, rows.Err()
}

func (r records) Scan(ctx context.Context, from, to string, limit int) ([]record.Record, error) {
	if err := r.ready(ctx); err != nil {
		return nil, err
	}
	q := `SELECT k, v, ver FROM ` + r.s.kvTable() + ` WHERE ver <> 0 AND k >= ` + r.s.args(0, 1)
	args := []any{[]byte(from)}
	if to != "" {
		q += ` AND k < ` + r.s.args(1, 1)
		args = append(args, []byte(to))
	}
	q += ` ORDER BY k`
	if limit > 0 {
		q += ` LIMIT ` + strconv.Itoa(limit)
	}
	var out []record.Record
	err := r.s.retry(ctx, "scan records", func() error {
		var err error
		out, err = r.query(ctx, r.s.db, q, args...)
		return err
	})
	return out, err
}

func (r records) Commit(ctx context.Context, cond []record.Record, ops []record.Op) (bool, error) {
	if err := record.Check(cond, ops); err != nil {
		return false, err
	}
	if err := r.ready(ctx); err != nil {
		return false, err
	}
	if tx := r.tx(ctx); tx != nil {
		return r.commitIn(ctx, tx, cond, ops)
	}
	err := r.s.write(ctx, "write records", func(tx *sql.Tx) error {
		ok, err := r.apply(ctx, tx, cond, ops)
		if err == nil && !ok {
			return errNotApplied // rolled back: the rows of version 0 it made go too
		}
		return err
	})
	if errors.Is(err, errNotApplied) {
		return false, nil
	}
	return err == nil, err
}

// commitIn is Commit in the caller's transaction tx, within a savepoint:
// a commit whose conditions do not hold undoes what it wrote (the rows of
// version 0 it made) and reports false, leaving the transaction as it
// was.
func (r records) commitIn(ctx context.Context, tx *sql.Tx, cond []record.Record, ops []record.Op) (bool, error) {
	// The transaction's replication is checked by the draws in it
	// (Gapless.Next) and by Gapless.Transact, which begins it.
	const sp = "sn_records"
	if _, err := tx.ExecContext(ctx, "SAVEPOINT "+sp); err != nil {
		return false, classify("write records", r.s.table, err, ctx)
	}
	ok, err := r.apply(ctx, tx, cond, ops)
	if err != nil || !ok {
		// Undone, and the transaction usable again (PostgreSQL refuses
		// every statement of a transaction after a failed one, but one
		// back to a savepoint).
		if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+sp); err == nil {
			err = rerr
		}
	}
	if err == nil {
		_, err = tx.ExecContext(ctx, "RELEASE SAVEPOINT "+sp)
	}
	if err != nil {
		return false, classify("write records", r.s.table, err, ctx)
	}
	return ok, nil
}

// errNotApplied ends the transaction of a commit whose conditions do not
// hold.
var errNotApplied = errors.New("sqlseq: a condition of the commit does not hold")

// apply checks cond and applies ops in tx; it reports false, having
// written nothing that the rollback will not undo, when a condition does
// not hold.
func (r records) apply(ctx context.Context, tx *sql.Tx, cond []record.Record, ops []record.Op) (bool, error) {
	t := r.s.kvTable()
	puts := map[string]bool{}
	for _, o := range ops {
		if o.Value != nil {
			puts[o.Key] = true
		}
	}
	// A key that must be absent and that the commit puts (create if
	// absent: a claim, an entry) is inserted only where no row holds a
	// value, in the put itself; another commit inserting it first makes
	// the insert write nothing, and this one is refused.
	created := map[string]bool{}
	var absent, locked []string
	for _, c := range cond {
		switch {
		case c.Version == 0 && puts[c.Key]:
			created[c.Key] = true
		case c.Version == 0:
			absent = append(absent, c.Key)
			locked = append(locked, c.Key)
		default:
			locked = append(locked, c.Key)
		}
	}
	// A key that must be absent gets a row of version 0, locked with
	// the others: two commits that want one key absent queue on it.
	for _, k := range absent {
		if _, err := tx.ExecContext(ctx, r.s.insertIgnore(t)+` (k, v, ver) VALUES (`+r.s.args(0, 3)+`)`+r.s.onConflictNothing(), []byte(k), []byte{}, 0); err != nil {
			return false, err
		}
	}
	if len(locked) > 0 {
		keys := locked
		rows, err := tx.QueryContext(ctx, `SELECT k, ver FROM `+t+` WHERE k IN (`+r.s.args(0, len(keys))+`) ORDER BY k FOR UPDATE`, keyArgs(keys)...)
		if err != nil {
			return false, err
		}
		have := map[string]int64{}
		for rows.Next() {
			var k []byte
			var ver int64
			if err := rows.Scan(&k, &ver); err != nil {
				rows.Close()
				return false, err
			}
			have[string(k)] = ver
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return false, err
		}
		for _, c := range cond {
			if !created[c.Key] && have[c.Key] != c.Version {
				return false, nil
			}
		}
	}
	for _, o := range ops {
		var err error
		switch {
		case o.Value != nil && created[o.Key]:
			ver := rand.Int64N(1<<63-1) + 1
			var res sql.Result
			if r.s.dialect == Postgres {
				res, err = tx.ExecContext(ctx, `INSERT INTO `+t+` AS t (k, v, ver) VALUES ($1, $2, $3) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v, ver = EXCLUDED.ver WHERE t.ver = 0`, []byte(o.Key), o.Value, ver)
			} else {
				// v first: ver = 0 is still the row's when v is set.
				res, err = tx.ExecContext(ctx, `INSERT INTO `+t+` (k, v, ver) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE v = IF(ver = 0, VALUES(v), v), ver = IF(ver = 0, VALUES(ver), ver)`, []byte(o.Key), o.Value, ver)
			}
			if err == nil {
				var n int64
				if n, err = res.RowsAffected(); err == nil && n == 0 {
					return false, nil // another commit made it first
				}
			}
		case o.Value != nil:
			ver := rand.Int64N(1<<63-1) + 1
			if r.s.dialect == Postgres {
				_, err = tx.ExecContext(ctx, `INSERT INTO `+t+` (k, v, ver) VALUES ($1, $2, $3) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v, ver = EXCLUDED.ver`, []byte(o.Key), o.Value, ver)
			} else {
				_, err = tx.ExecContext(ctx, `INSERT INTO `+t+` (k, v, ver) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v), ver = VALUES(ver)`, []byte(o.Key), o.Value, ver)
			}
		case o.End != "":
			_, err = tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE k >= `+r.s.args(0, 1)+` AND k < `+r.s.args(1, 1), []byte(o.Key), []byte(o.End))
		default:
			_, err = tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE k = `+r.s.args(0, 1), []byte(o.Key))
		}
		if err != nil {
			return false, err
		}
	}
	if len(absent) > 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE ver = 0 AND k IN (`+r.s.args(0, len(absent))+`)`, keyArgs(absent)...); err != nil {
			return false, err
		}
	}
	return true, nil
}

func (s *Store) insertIgnore(t string) string {
	if s.dialect == Postgres {
		return `INSERT INTO ` + t
	}
	return `INSERT IGNORE INTO ` + t
}

func (s *Store) onConflictNothing() string {
	if s.dialect == Postgres {
		return ` ON CONFLICT (k) DO NOTHING`
	}
	return ``
}

func (r records) Now(ctx context.Context) (time.Time, error) { return r.s.now(ctx) }

// now returns the database's clock, by which [Store.Expire] keeps its
// deadlines, the clock of its records.
func (s *Store) now(ctx context.Context) (time.Time, error) {
	var us int64
	err := s.retry(ctx, "read the clock", func() error {
		return s.db.QueryRowContext(ctx, s.q.nowMicros).Scan(&us)
	})
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMicro(us), nil
}

// querier is what reads rows: the Store's *sql.DB, or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

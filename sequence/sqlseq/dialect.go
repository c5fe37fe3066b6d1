package sqlseq

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"

	"github.com/sngen/sn/sequence"
)

// execer is what runs a statement: the Store's *sql.DB, or a caller's
// *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// queries are the statements of one dialect over one table.
type queries struct {
	create string
	read   string // SELECT k, last of a key's row, by id
	// allocate raises key's mark by n, creating its row, and returns the
	// new mark; found is false when no row changed (another key's row, or
	// no room).
	allocate func(ctx context.Context, db execer, id [32]byte, key string, n int64) (last int64, found bool, err error)
	// draw is allocate inside a caller's transaction, for Gapless: it
	// must take the row's exclusive lock at once, so that callers queue on
	// it and never deadlock. ensure, when not nil, makes the row exist
	// beforehand, outside the transaction.
	draw   func(ctx context.Context, tx execer, id [32]byte, key string, n int64) (last int64, found bool, err error)
	ensure string
	exists string // a plain read of whether the key has a row
	insert string // inserts the row of id $1 with k $2 and mark 0, unless there is one
	// floor raises key's mark to at least floor (which is above 0) and
	// returns the mark; found is false when no row changed (another key's
	// row).
	floor func(ctx context.Context, db *sql.DB, id [32]byte, key string, floor int64) (last int64, found bool, err error)

	// The expiry of keys (see expire.go): a second table of deadlines,
	// by the database's clock, in microseconds from its own now.
	createExpiry string
	now          string // the database's time now, in the type of a deadline
	setExpiry    string // sets key $1's deadline to $2 + $3 microseconds
	sweepLedger  string // deletes the ledger rows whose deadline is at or before $1
	sweepExpiry  string // deletes the deadlines at or before $1
	deleteKey    string // deletes key $1's ledger row
	deleteExpiry string // deletes key $1's deadline
}

func queriesFor(d Dialect, table string) (queries, error) {
	switch d {
	case Postgres:
		return postgres(table), nil
	case MySQL:
		return mysql(table), nil
	}
	return queries{}, fmt.Errorf("sqlseq: dialect %q: want %q or %q: %w", d, Postgres, MySQL, sequence.ErrInvalidArgument)
}

// postgres: one INSERT ... ON CONFLICT DO UPDATE ... RETURNING per call.
// The WHERE of the update refuses another key's row and a mark with no
// room left; then no row is returned.
func postgres(table string) queries {
	// Quoted, so that a reserved word ("user") is a name; lowercased, as
	// PostgreSQL folds the unquoted name, so that it names the same table.
	parts := strings.Split(strings.ToLower(table), ".")
	r := strings.NewReplacer("{table}", `"`+strings.Join(parts, `"."`)+`"`, "{expiry}", `"`+strings.Join(parts, `"."`)+`_expiry"`)
	create := r.Replace(`CREATE TABLE IF NOT EXISTS {table} (
	id bytea PRIMARY KEY CHECK (octet_length(id) = 32),
	k bytea NOT NULL,
	last bigint NOT NULL CHECK (last >= 0)
)`)
	allocSQL := r.Replace(`INSERT INTO {table} AS l (id, k, last) VALUES ($1, $2, $3)
ON CONFLICT (id) DO UPDATE SET last = l.last + EXCLUDED.last
WHERE l.k = EXCLUDED.k AND l.last <= $4
RETURNING last`)
	floorSQL := r.Replace(`INSERT INTO {table} AS l (id, k, last) VALUES ($1, $2, $3)
ON CONFLICT (id) DO UPDATE SET last = GREATEST(l.last, EXCLUDED.last)
WHERE l.k = EXCLUDED.k
RETURNING last`)
	q := queries{
		create: create,
		read:   r.Replace(`SELECT k, last FROM {table} WHERE id = $1`),
		insert: r.Replace(`INSERT INTO {table} (id, k, last) VALUES ($1, $2, 0) ON CONFLICT (id) DO NOTHING`),
		allocate: func(ctx context.Context, db execer, id [32]byte, key string, n int64) (int64, bool, error) {
			var last int64
			err := db.QueryRowContext(ctx, allocSQL, id[:], []byte(key), n, math.MaxInt64-n).Scan(&last)
			if err == sql.ErrNoRows {
				return 0, false, nil
			}
			return last, err == nil, err
		},
		floor: func(ctx context.Context, db *sql.DB, id [32]byte, key string, floor int64) (int64, bool, error) {
			var last int64
			err := db.QueryRowContext(ctx, floorSQL, id[:], []byte(key), floor).Scan(&last)
			if err == sql.ErrNoRows {
				return 0, false, nil
			}
			return last, err == nil, err
		},
		createExpiry: r.Replace(`CREATE TABLE IF NOT EXISTS {expiry} (
	id bytea PRIMARY KEY CHECK (octet_length(id) = 32),
	deadline timestamptz NOT NULL
)`),
		now: `SELECT now()`,
		setExpiry: r.Replace(`INSERT INTO {expiry} (id, deadline) VALUES ($1, $2::timestamptz + $3 * interval '1 microsecond')
ON CONFLICT (id) DO UPDATE SET deadline = EXCLUDED.deadline`),
		sweepLedger:  r.Replace(`DELETE FROM {table} l USING {expiry} e WHERE l.id = e.id AND e.deadline <= $1`),
		sweepExpiry:  r.Replace(`DELETE FROM {expiry} WHERE deadline <= $1`),
		deleteKey:    r.Replace(`DELETE FROM {table} WHERE id = $1`),
		deleteExpiry: r.Replace(`DELETE FROM {expiry} WHERE id = $1`),
	}
	// ON CONFLICT DO UPDATE locks the row it updates, without an upgrade
	// from a shared lock: concurrent transactions queue on it.
	q.draw = q.allocate
	return q
}

// mysql: one INSERT ... ON DUPLICATE KEY UPDATE per call, which hands the
// new mark back through LAST_INSERT_ID(expr), so that no second statement
// and no explicit transaction is needed. Another key's row, or no room,
// leaves the row as it is and sets LAST_INSERT_ID to 0, which no real mark
// equals.
func mysql(table string) queries {
	// Quoted, so that a reserved word ("select") is a name.
	r := strings.NewReplacer("{table}", "`"+strings.ReplaceAll(table, ".", "`.`")+"`", "{expiry}", "`"+strings.ReplaceAll(table, ".", "`.`")+"_expiry`")
	create := r.Replace(`CREATE TABLE IF NOT EXISTS {table} (
	id BINARY(32) NOT NULL PRIMARY KEY,
	k LONGBLOB NOT NULL,
	last BIGINT NOT NULL
) ENGINE=InnoDB`)
	allocSQL := r.Replace(`INSERT INTO {table} (id, k, last) VALUES (?, ?, LAST_INSERT_ID(?))
ON DUPLICATE KEY UPDATE last = IF(k = ? AND last <= ?, LAST_INSERT_ID(last + ?), last + 0 * LAST_INSERT_ID(0))`)
	floorSQL := r.Replace(`INSERT INTO {table} (id, k, last) VALUES (?, ?, LAST_INSERT_ID(?))
ON DUPLICATE KEY UPDATE last = IF(k = ?, LAST_INSERT_ID(GREATEST(last, ?)), last + 0 * LAST_INSERT_ID(0))`)
	drawSQL := r.Replace(`UPDATE {table} SET last = LAST_INSERT_ID(last + ?) WHERE id = ? AND k = ? AND last <= ?`)
	return queries{
		create: create,
		read:   r.Replace(`SELECT k, last FROM {table} WHERE id = ?`),
		// InnoDB's INSERT ... ON DUPLICATE KEY UPDATE takes a shared lock
		// on the row before the exclusive one: two transactions doing it
		// deadlock. In a transaction, an UPDATE of a row that exists
		// takes the exclusive lock at once.
		ensure: r.Replace(`INSERT IGNORE INTO {table} (id, k, last) VALUES (?, ?, 0)`),
		insert: r.Replace(`INSERT IGNORE INTO {table} (id, k, last) VALUES (?, ?, 0)`),
		exists: r.Replace(`SELECT 1 FROM {table} WHERE id = ?`),
		draw: func(ctx context.Context, tx execer, id [32]byte, key string, n int64) (int64, bool, error) {
			res, err := tx.ExecContext(ctx, drawSQL, n, id[:], []byte(key), math.MaxInt64-n)
			if err != nil {
				return 0, false, err
			}
			if rows, err := res.RowsAffected(); err != nil || rows == 0 {
				return 0, false, err
			}
			last, err := res.LastInsertId()
			return last, err == nil && last > 0, err
		},
		allocate: func(ctx context.Context, db execer, id [32]byte, key string, n int64) (int64, bool, error) {
			res, err := db.ExecContext(ctx, allocSQL, id[:], []byte(key), n, []byte(key), math.MaxInt64-n, n)
			if err != nil {
				return 0, false, err
			}
			last, err := res.LastInsertId()
			return last, err == nil && last > 0, err
		},
		floor: func(ctx context.Context, db *sql.DB, id [32]byte, key string, floor int64) (int64, bool, error) {
			res, err := db.ExecContext(ctx, floorSQL, id[:], []byte(key), floor, []byte(key), floor)
			if err != nil {
				return 0, false, err
			}
			last, err := res.LastInsertId()
			return last, err == nil && last > 0, err
		},
		createExpiry: r.Replace(`CREATE TABLE IF NOT EXISTS {expiry} (
	id BINARY(32) NOT NULL PRIMARY KEY,
	deadline DATETIME(6) NOT NULL
) ENGINE=InnoDB`),
		now: `SELECT UTC_TIMESTAMP(6)`,
		setExpiry: r.Replace(`INSERT INTO {expiry} (id, deadline) VALUES (?, ? + INTERVAL ? MICROSECOND)
ON DUPLICATE KEY UPDATE deadline = VALUES(deadline)`),
		sweepLedger:  r.Replace(`DELETE l FROM {table} l JOIN {expiry} e ON l.id = e.id WHERE e.deadline <= ?`),
		sweepExpiry:  r.Replace(`DELETE FROM {expiry} WHERE deadline <= ?`),
		deleteKey:    r.Replace(`DELETE FROM {table} WHERE id = ?`),
		deleteExpiry: r.Replace(`DELETE FROM {expiry} WHERE id = ?`),
	}
}

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
	floor func(ctx context.Context, db execer, id [32]byte, key string, floor int64) (last int64, found bool, err error)

	// The expiry of keys (see expire.go): a second table of deadlines,
	// by the database's clock, in microseconds from its own now.
	createExpiry string
	now          string // the database's time now, in the type of a deadline
	nowMicros    string // the database's time now, in Unix microseconds
	setExpiry    string // sets key $1's deadline to $2 + $3 microseconds
	sweepLedger  string // deletes the ledger rows whose deadline is at or before $1
	sweepExpiry  string // deletes the deadlines at or before $1
	deleteKey    string // deletes key $1's ledger row
	deleteExpiry string // deletes key $1's deadline

	// The worker-id leases of an earlier release (see migrate.go): the
	// table the ledger's name and "_workers", one row per name and id,
	// is moved into the records, and a table that takes no row put in
	// its place, so that a process of that release leases nothing.
	fenceWorkers string // makes the table that takes no row, named {workers}, or {workers_fence} on MySQL
	fenceDDL     string // makes it, named {workers}, if it does not exist: for Schema
	// tables are the quoted names of the ledger's tables, but for the
	// records': the ledger, its expiry, its holds and the fence.
	tables        []string
	legacyWorkers string // reads name, worker, token, deadline (Unix microseconds), bound of the moved table
	moveWorkers   string // renames {workers} away (and, on MySQL, the fence into its place)
	movedWorkers  string // on MySQL, renames the moved table to its last name
	placeFence    string // on MySQL, renames {workers_fence} to {workers}
	// legacyWorkersExist fails, with no such table, when there is no
	// {workers}; legacyWorkersTable names it.
	legacyWorkersExist, legacyWorkersTable string
	// fencedWorkers, on PostgreSQL, of the table's name $1, reads whether
	// it is the fence.
	fencedWorkers string

	// legacyRecords reads the named records of an earlier release (see
	// migrate.go), name and value; legacyUnrecord, of name $1, deletes one.
	legacyRecords, legacyUnrecord string

	// legacyEntries reads the catalog's table of an earlier release
	// (see migrate.go); legacyForget, of id $1, deletes an entry of it.
	legacyEntries, legacyForget string

	// returnRange, of first-1 $1, id $2, key $3, last $4, floor id $5,
	// lowers the mark of key from last to first-1 when it is last still
	// and the mark of the floor row $5 (key "|floor") is at most first-1.
	returnRange string

	// quoted is the ledger's table, quoted as the statements name it.
	quoted string

	// lockRow, of id $1, reads k and last of a key's row and locks it;
	// setLast, of last $1 and id $2, sets its mark.
	lockRow, setLast string

	// The journal of an earlier release (see migrate.go): legacyEvents
	// reads up to 1000 records with their key (k, id, seq, kind, first_n,
	// last_n, at_us, by_name, actor, reason, deadline_us, hash);
	// legacyUnjournal, of id and through, deletes a key's records up to
	// through; legacyHeads reads the heads (k, id, seq, hash, mark), and
	// legacyUnhead, of id, deletes one.
	legacyEvents, legacyUnjournal, legacyHeads, legacyUnhead string

	// The holds of gapless numbers not committed yet (see Gapless.Hold):
	// addHold, of id $1, n $2 and deadline $3; deleteHold, of id $1 and n
	// $2, which ends one.
	createHolds, addHold, deleteHold string
	// deleteHolds, of id $1, first $2 and last $3, ends the holds of a range.
	deleteHolds string

	// The claims of idempotency keys of an earlier release (see
	// migrate.go): legacyMemo, of id (the SHA-256 of the key), reads
	// digest, token, answer, until and done; legacyUnmemo, of id, deletes
	// one; legacySweep, of now, deletes those past their time.
	legacyMemo, legacyUnmemo, legacySweep string
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
	r := strings.NewReplacer("{table}", `"`+strings.Join(parts, `"."`)+`"`, "{expiry}", `"`+strings.Join(parts, `"."`)+`_expiry"`,
		"{workers}", `"`+strings.Join(parts, `"."`)+`_workers"`, "{workers_moved_bare}", `"`+parts[len(parts)-1]+`_wmoved"`, "{records}", `"`+strings.Join(parts, `"."`)+`_records"`,
		"{catalog}", `"`+strings.Join(parts, `"."`)+`_catalog"`,
		"{journal}", `"`+strings.Join(parts, `"."`)+`_journal"`, "{jhead}", `"`+strings.Join(parts, `"."`)+`_jhead"`,
		"{holds}", `"`+strings.Join(parts, `"."`)+`_holds"`, "{idem}", `"`+strings.Join(parts, `"."`)+`_idem"`)
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
	fenceSQL := `CREATE TABLE {workers} (
	name bytea NOT NULL,
	worker bigint NOT NULL,
	token text NOT NULL,
	deadline timestamptz NOT NULL,
	bound bigint NOT NULL,
	PRIMARY KEY (name, worker),
	CONSTRAINT "moved to the records: upgrade every process of sn" CHECK (false)
)`
	q := queries{
		quoted: r.Replace(`{table}`),
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
		floor: func(ctx context.Context, db execer, id [32]byte, key string, floor int64) (int64, bool, error) {
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
		now:       `SELECT now()`,
		nowMicros: `SELECT (extract(epoch FROM now()) * 1000000)::bigint`,
		setExpiry: r.Replace(`INSERT INTO {expiry} (id, deadline) VALUES ($1, $2::timestamptz + $3 * interval '1 microsecond')
ON CONFLICT (id) DO UPDATE SET deadline = EXCLUDED.deadline`),
		sweepLedger:  r.Replace(`DELETE FROM {table} l USING {expiry} e WHERE l.id = e.id AND e.deadline <= $1`),
		sweepExpiry:  r.Replace(`DELETE FROM {expiry} WHERE deadline <= $1`),
		deleteKey:    r.Replace(`DELETE FROM {table} WHERE id = $1`),
		deleteExpiry: r.Replace(`DELETE FROM {expiry} WHERE id = $1`),

		fenceWorkers:       r.Replace(fenceSQL),
		fenceDDL:           r.Replace(strings.Replace(fenceSQL, "CREATE TABLE {workers}", "CREATE TABLE IF NOT EXISTS {workers}", 1)),
		tables:             []string{r.Replace(`{table}`), r.Replace(`{expiry}`), r.Replace(`{holds}`), r.Replace(`{workers}`)},
		legacyWorkers:      r.Replace(`SELECT name, worker, token, (extract(epoch FROM deadline) * 1000000)::bigint, bound FROM {workers}`),
		moveWorkers:        r.Replace(`ALTER TABLE {workers} RENAME TO {workers_moved_bare}`),
		legacyWorkersExist: r.Replace(`SELECT 1 FROM {workers} WHERE 1 = 0`),
		legacyWorkersTable: r.Replace(`{workers}`),
		fencedWorkers:      `SELECT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass($1) AND conname = 'moved to the records: upgrade every process of sn')`,
		legacyRecords:      r.Replace(`SELECT name, value FROM {records}`),
		legacyUnrecord:     r.Replace(`DELETE FROM {records} WHERE name = $1`),
		legacyEntries:      r.Replace(`SELECT id, name, spec, first_us, first_by FROM {catalog} ORDER BY first_us, id`),
		legacyForget:       r.Replace(`DELETE FROM {catalog} WHERE id = $1`),
		legacyEvents: r.Replace(`SELECT h.k, j.id, j.seq, j.kind, j.first_n, j.last_n, j.at_us, j.by_name, j.actor, j.reason, j.deadline_us, j.hash
FROM {journal} j JOIN {jhead} h ON h.id = j.id ORDER BY j.id, j.seq LIMIT 1000 FOR UPDATE OF j`),
		legacyUnjournal: r.Replace(`DELETE FROM {journal} WHERE id = $1 AND seq <= $2`),
		legacyHeads:     r.Replace(`SELECT k, id, seq, hash, mark FROM {jhead}`),
		legacyUnhead:    r.Replace(`DELETE FROM {jhead} WHERE id = $1`),
		returnRange: r.Replace(`UPDATE {table} SET last = $1 WHERE id = $2 AND k = $3 AND last = $4
AND COALESCE((SELECT f.last FROM {table} f WHERE f.id = $5), 0) <= $1`),
		lockRow: r.Replace(`SELECT k, last FROM {table} WHERE id = $1 FOR UPDATE`),
		setLast: r.Replace(`UPDATE {table} SET last = $1 WHERE id = $2`),
		createHolds: r.Replace(`CREATE TABLE IF NOT EXISTS {holds} (
	id bytea NOT NULL CHECK (octet_length(id) = 32),
	n bigint NOT NULL,
	deadline_us bigint NOT NULL,
	PRIMARY KEY (id, n)
)`),
		addHold:      r.Replace(`INSERT INTO {holds} (id, n, deadline_us) VALUES ($1, $2, $3)`),
		deleteHold:   r.Replace(`DELETE FROM {holds} WHERE id = $1 AND n = $2`),
		deleteHolds:  r.Replace(`DELETE FROM {holds} WHERE id = $1 AND n BETWEEN $2 AND $3`),
		legacyMemo:   r.Replace(`SELECT digest, token, answer, until_us, done FROM {idem} WHERE id = $1`),
		legacyUnmemo: r.Replace(`DELETE FROM {idem} WHERE id = $1`),
		legacySweep:  r.Replace(`DELETE FROM {idem} WHERE until_us <= $1`),
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
	r := strings.NewReplacer("{table}", "`"+strings.ReplaceAll(table, ".", "`.`")+"`", "{expiry}", "`"+strings.ReplaceAll(table, ".", "`.`")+"_expiry`",
		"{workers}", "`"+strings.ReplaceAll(table, ".", "`.`")+"_workers`", "{workers_fence}", "`"+strings.ReplaceAll(table, ".", "`.`")+"_wfence`",
		"{workers_moving}", "`"+strings.ReplaceAll(table, ".", "`.`")+"_wmoving`", "{workers_moved}", "`"+strings.ReplaceAll(table, ".", "`.`")+"_wmoved`",
		"{records}", "`"+strings.ReplaceAll(table, ".", "`.`")+"_records`",
		"{catalog}", "`"+strings.ReplaceAll(table, ".", "`.`")+"_catalog`",
		"{journal}", "`"+strings.ReplaceAll(table, ".", "`.`")+"_journal`", "{jhead}", "`"+strings.ReplaceAll(table, ".", "`.`")+"_jhead`",
		"{holds}", "`"+strings.ReplaceAll(table, ".", "`.`")+"_holds`", "{idem}", "`"+strings.ReplaceAll(table, ".", "`.`")+"_idem`")
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
	// VARBINARY: a binary collation, so that names that differ only in
	// case or accents are two names.
	fenceSQL := `CREATE TABLE {workers_fence} (
	name VARBINARY(255) NOT NULL,
	worker BIGINT NOT NULL,
	token VARBINARY(64) NOT NULL,
	deadline DATETIME(6) NOT NULL,
	bound BIGINT NOT NULL,
	PRIMARY KEY (name, worker),
	CHECK (worker < 0 AND worker >= 0)
) ENGINE=InnoDB COMMENT='moved to the records: upgrade every process of sn'`
	return queries{
		quoted: r.Replace(`{table}`),
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
		floor: func(ctx context.Context, db execer, id [32]byte, key string, floor int64) (int64, bool, error) {
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
		now:       `SELECT UTC_TIMESTAMP(6)`,
		nowMicros: `SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))`,
		setExpiry: r.Replace(`INSERT INTO {expiry} (id, deadline) VALUES (?, ? + INTERVAL ? MICROSECOND)
ON DUPLICATE KEY UPDATE deadline = VALUES(deadline)`),
		sweepLedger:  r.Replace(`DELETE l FROM {table} l JOIN {expiry} e ON l.id = e.id WHERE e.deadline <= ?`),
		sweepExpiry:  r.Replace(`DELETE FROM {expiry} WHERE deadline <= ?`),
		deleteKey:    r.Replace(`DELETE FROM {table} WHERE id = ?`),
		deleteExpiry: r.Replace(`DELETE FROM {expiry} WHERE id = ?`),

		fenceWorkers:       r.Replace(fenceSQL),
		fenceDDL:           r.Replace(strings.Replace(fenceSQL, "CREATE TABLE {workers_fence}", "CREATE TABLE IF NOT EXISTS {workers}", 1)),
		tables:             []string{r.Replace(`{table}`), r.Replace(`{expiry}`), r.Replace(`{holds}`), r.Replace(`{workers}`)},
		legacyWorkers:      r.Replace(`SELECT name, worker, token, TIMESTAMPDIFF(MICROSECOND, '1970-01-01', deadline), bound FROM {workers_moving}`),
		moveWorkers:        r.Replace(`RENAME TABLE {workers} TO {workers_moving}, {workers_fence} TO {workers}`),
		movedWorkers:       r.Replace(`RENAME TABLE {workers_moving} TO {workers_moved}`),
		placeFence:         r.Replace(`RENAME TABLE {workers_fence} TO {workers}`),
		legacyWorkersExist: r.Replace(`SELECT 1 FROM {workers} WHERE 1 = 0`),
		legacyWorkersTable: r.Replace(`{workers}`),
		legacyRecords:      r.Replace(`SELECT name, value FROM {records}`),
		legacyUnrecord:     r.Replace(`DELETE FROM {records} WHERE name = ?`),
		legacyEntries:      r.Replace(`SELECT id, name, spec, first_us, first_by FROM {catalog} ORDER BY first_us, id`),
		legacyForget:       r.Replace(`DELETE FROM {catalog} WHERE id = ?`),
		legacyEvents: r.Replace(`SELECT h.k, j.id, j.seq, j.kind, j.first_n, j.last_n, j.at_us, j.by_name, j.actor, j.reason, j.deadline_us, j.hash
FROM {journal} j JOIN {jhead} h ON h.id = j.id ORDER BY j.id, j.seq LIMIT 1000 FOR UPDATE`),
		legacyUnjournal: r.Replace(`DELETE FROM {journal} WHERE id = ? AND seq <= ?`),
		legacyHeads:     r.Replace(`SELECT k, id, seq, hash, mark FROM {jhead}`),
		legacyUnhead:    r.Replace(`DELETE FROM {jhead} WHERE id = ?`),
		returnRange: r.Replace(`UPDATE {table} SET last = ? WHERE id = ? AND k = ? AND last = ?
AND COALESCE((SELECT f.last FROM (SELECT last FROM {table} WHERE id = ?) AS f), 0) <= ?`),
		lockRow: r.Replace(`SELECT k, last FROM {table} WHERE id = ? FOR UPDATE`),
		setLast: r.Replace(`UPDATE {table} SET last = ? WHERE id = ?`),
		createHolds: r.Replace(`CREATE TABLE IF NOT EXISTS {holds} (
	id BINARY(32) NOT NULL,
	n BIGINT NOT NULL,
	deadline_us BIGINT NOT NULL,
	PRIMARY KEY (id, n)
) ENGINE=InnoDB`),
		addHold:      r.Replace(`INSERT INTO {holds} (id, n, deadline_us) VALUES (?, ?, ?)`),
		deleteHold:   r.Replace(`DELETE FROM {holds} WHERE id = ? AND n = ?`),
		deleteHolds:  r.Replace(`DELETE FROM {holds} WHERE id = ? AND n BETWEEN ? AND ?`),
		legacyMemo:   r.Replace(`SELECT digest, token, answer, until_us, done FROM {idem} WHERE id = ?`),
		legacyUnmemo: r.Replace(`DELETE FROM {idem} WHERE id = ?`),
		legacySweep:  r.Replace(`DELETE FROM {idem} WHERE until_us <= ?`),
	}
}

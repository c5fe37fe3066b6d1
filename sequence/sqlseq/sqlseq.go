// Package sqlseq is a durable [sequence.Allocator] that keeps its counters
// in one table of a SQL database — PostgreSQL or MySQL/MariaDB, through
// database/sql — shared by every process and machine that issues numbers.
// It is the ledger: the record of every number ever handed out, which
// caches such as Redis recover from.
//
// Open the database with the driver of your choice (github.com/jackc/pgx/v5/stdlib
// for PostgreSQL, github.com/go-sql-driver/mysql for MySQL and MariaDB),
// create the table once with [Store.Migrate], and put a [sequence.Segment]
// in front, so that one transaction serves a whole block of numbers:
//
//	db, err := sql.Open("pgx", "postgres://sn@db.internal/orders")
//	store, err := sqlseq.New(db, sqlseq.Postgres, sqlseq.Options{})
//	err = store.Migrate(ctx)
//	gen, err := sequence.NewSegment(store, sequence.SegmentOptions{})
//
// # The table
//
// One row per counter key: id, the SHA-256 of the key (the primary key, 32
// bytes); k, the key's bytes, unchanged (any bytes, up to [MaxKeyLen]); last, the
// key's high-water mark, a 64-bit integer: the largest number ever reserved
// or set by a floor. A key without a row has mark 0, so its first number is
// 1. Every statement compares k with the key it was given, so two keys with
// one hash could never share a row: that would be an error wrapping
// [ErrCorrupt], not a repeat.
//
// A second table, the ledger's name and "_expiry", holds the deadlines of
// keys that expire (counters per hour, minute or second; see
// [Store.Expire]): id and deadline, by the database's clock. "_kv" holds
// the records of package record ([Store.Records]): the catalog of series,
// named records, the claims of idempotency keys, each key's journal and
// its head (package journal) and the worker-id leases of snowflake Gens
// ([Leaser]); "_holds" the gapless numbers held ([Gapless.Hold]). The
// tables "_catalog", "_records", "_idem", "_journal", "_jhead" and
// "_workers" of earlier releases are moved into "_kv" (see
// [Store.Migrate]); in the place of "_workers" stands a table that takes
// no row, so that a process of an earlier release leases nothing.
//
// # Allocate
//
// Each [Store.Allocate] is one transaction: it locks the key's row and its
// journal's head in one statement, raises the mark, and appends the
// block's record to the journal (on PostgreSQL the last three in one
// statement): four round trips on PostgreSQL, six on MySQL, per block,
// and one more that checks the server's replication (see
// [Store.CheckReplication]; none when Options.Replication is [SingleServer]
// or [AcceptAsyncLoss]; two on MariaDB that writes a binary log). Concurrent callers for one key queue on its row lock for the length of
// the transaction. Once Allocate returns a range, the database has
// committed it and its record; one that returned an error may have
// committed (a connection lost after the commit), which costs a gap,
// recorded, never a repeat.
//
// Serialization failures, deadlocks and lost connections are retried with
// a short backoff, within the caller's context. Errors that remain are
// classified in one place ([classify]): the database cannot be reached,
// or refuses for a reason that retrying may mend, wraps
// [sequence.ErrUnavailable]; anything else (no table, no permission) is
// returned as the database said it, wrapped with the statement's purpose.
package sqlseq

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// Dialect is the SQL a Store speaks.
type Dialect string

const (
	// Postgres is PostgreSQL 12 or later.
	Postgres Dialect = "postgres"
	// MySQL is MySQL 8 or MariaDB 10.5 or later.
	MySQL Dialect = "mysql"
)

// DefaultTable is the default for [Options.Table].
const DefaultTable = "sn_ledger"

// Options configures [New]. The zero value gives the
// defaults.
type Options struct {
	// Table is the name of the ledger table, optionally qualified by a
	// schema ("billing.sn_ledger"): letters, digits and "_", starting with
	// a letter or "_", at most 55 bytes (the schema 63), so that the
	// tables named after it ("<table>_expiry", "<table>_workers") fit.
	// default: DefaultTable ("sn_ledger").
	Table string

	// Retries is how many times a statement that failed for a transient
	// reason (serialization failure, deadlock, lost connection) is tried
	// again, with a backoff from 10ms doubling to 1s, within the caller's
	// context. -1 means never.
	// default: 8.
	Retries int

	// Replication says which failovers of the ledger's server the Store
	// accepts; see [Store.CheckReplication].
	// default: RequireSync.
	Replication Replication
}

var (
	// ErrCorrupt means a row of the ledger is not one sqlseq wrote: its
	// key's bytes differ from the key its hash says, or its mark is
	// negative. Nothing is issued from it.
	ErrCorrupt = errors.New("sqlseq: corrupt ledger")
)

// Store is a durable [sequence.Allocator] over one ledger table. It also
// implements [sequence.Floorer] and has an identity ([Store.StoreID]). A Store is safe for concurrent use; it
// does not own the *sql.DB, which the caller closes.
type Store struct {
	db      *sql.DB
	dialect Dialect
	table   string
	retries int
	q       queries
	// replication is the failovers the Store accepts.
	replication Replication
	id          atomic.Pointer[string] // the ledger's identity, once read
	rows        sync.Map               // [32]byte -> struct{}: keys whose row Gapless saw (MySQL)
	// kvOK says the table of records exists and what an earlier release
	// kept elsewhere was moved into it (see Store.migrate).
	kvOK atomic.Bool
	// legacyClaims says the claims' table of an earlier release holds
	// claims not yet moved into the records (see Store.sweepClaims).
	legacyClaims atomic.Bool
	migrateMu    sync.Mutex // one migration at a time
	// flavor is 1 for MariaDB, 2 for MySQL, 0 until read.
	flavor atomic.Int32
}

// tableName is a table name and its schema: 63 bytes is the longest name
// PostgreSQL keeps (MySQL's is 64), and the table's is 8 shorter, for the
// tables named after it ("_expiry", "_workers").
var tableName = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]{0,62}\.)?[A-Za-z_][A-Za-z0-9_]{0,54}$`)

// New returns a Store over db, which it does not own. It checks its
// arguments and nothing else: call [Store.Migrate] to create the table.
func New(db *sql.DB, d Dialect, o Options) (*Store, error) {
	if db == nil {
		return nil, fmt.Errorf("sqlseq: nil *sql.DB: %w", sequence.ErrInvalidArgument)
	}
	if o.Table == "" {
		o.Table = DefaultTable
	}
	if !tableName.MatchString(o.Table) {
		return nil, fmt.Errorf("sqlseq: table %q: want a name such as sn_ledger or billing.sn_ledger: %w", o.Table, sequence.ErrInvalidArgument)
	}
	switch {
	case o.Retries == 0:
		o.Retries = 8
	case o.Retries < 0:
		o.Retries = 0
	}
	switch o.Replication {
	case RequireSync, SingleServer, AcceptAsyncLoss:
	default:
		return nil, fmt.Errorf("sqlseq: Replication %q: want %q, %q or %q: %w", o.Replication, RequireSync, SingleServer, AcceptAsyncLoss, sequence.ErrInvalidArgument)
	}
	q, err := queriesFor(d, o.Table)
	if err != nil {
		return nil, err
	}
	return &Store{db: db, dialect: d, table: o.Table, retries: o.Retries, q: q, replication: o.Replication}, nil
}

// Table returns the name of the ledger table.
func (s *Store) Table() string { return s.table }

// Migrate creates the ledger table, the table of the deadlines of
// expiring keys (the ledger's name and "_expiry"), the records of
// package record ("_kv", see [Store.Records]: the catalog, named
// records, the claims of idempotency keys, the journals, the worker-id
// leases) and the holds of gapless numbers ("_holds", see
// [Gapless.Hold]), if they do not exist, and "_workers", a table that
// takes no row (see below).
// It changes nothing in a table that does, and creates nothing that
// exists: it looks for each table with a query that reads no row, so
// that a role that may not create tables runs on tables a DBA made with
// [Store.Schema], given the rights of [Store.Grants]. Processes may call
// it at once.
//
// It then moves what an earlier release kept in tables of its own into
// the records: the entries of "_catalog", the rows of "_records", and the
// journals of "_journal" and "_jhead", a thousand records a transaction
// (each deleted once moved, so that a Forget is not undone), and it deletes the
// claims of "_idem" past their time (the others move when their key is
// next claimed). The emptied tables are left for the DBA to drop. The
// worker-id leases of "_workers" are adopted in the records, each live
// lease held until its deadline and each bound kept, and the table is
// renamed "_wmoved"; a table that takes no row is put in its place, so
// that a process of an earlier release still running loses its lease at
// its next renewal and leases nothing.
func (s *Store) Migrate(ctx context.Context) error {
	for try := 0; ; try++ {
		err := s.retry(ctx, "migrate", func() error { return s.ensureTables(ctx) })
		// PostgreSQL fails one of two CREATE TABLE IF NOT EXISTS that run
		// at once, when the other commits (a duplicate table, type or
		// catalog row): once it has, the statement finds the table. Each
		// of the nine tables can fail a migration once.
		if st := sqlState(err); try < 20 && (st == "23505" || st == "42P07" || st == "42710") {
			continue
		}
		if err != nil {
			return err
		}
		// The tables exist: move what an earlier release kept, one
		// migration at a time, before the records are used.
		s.migrateMu.Lock()
		defer s.migrateMu.Unlock()
		if err := s.migrate(ctx); err != nil {
			return err
		}
		s.kvOK.Store(true)
		return nil
	}
}

// Allocate reserves the n numbers after key's high-water mark and raises
// the mark past them, in one committed statement. The first range of a new
// key starts at 1. n < 1 gives an error wrapping
// [sequence.ErrInvalidArgument]; a range that would go past math.MaxInt64
// an error wrapping [sequence.ErrExhausted], and reserves nothing.
func (s *Store) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	if n < 1 {
		return sequence.Range{}, fmt.Errorf("sqlseq: allocate %d numbers: %w", n, sequence.ErrInvalidArgument)
	}
	var r sequence.Range
	_, err := s.journaled(ctx, "allocate", key, func(_ execer, last, _ int64) (int64, []journal.Event, error) {
		if last > math.MaxInt64-n {
			return 0, nil, fmt.Errorf("sqlseq: key %q: mark %d leaves no room for %d more numbers: %w", key, last, n, sequence.ErrExhausted)
		}
		r = sequence.Range{First: last + 1, Last: last + n}
		return r.Last, []journal.Event{{Kind: journal.AllocateKind(ctx), Range: r}}, nil
	})
	if err != nil {
		return sequence.Range{}, err
	}
	return r, nil
}

// Floor raises key's high-water mark to floor, so that every later number
// is greater; a floor at or below the mark changes nothing. floor must be
// between 0 and math.MaxInt64.
func (s *Store) Floor(ctx context.Context, key string, floor int64) error {
	if floor < 0 {
		return fmt.Errorf("sqlseq: floor %d: %w", floor, sequence.ErrInvalidArgument)
	}
	if err := checkKey(key); err != nil {
		return err
	}
	if floor == 0 {
		return nil
	}
	fid := hash(floorKey(key))
	// The floor's own row first: a Return that follows sees it.
	err := s.write(ctx, "floor", func(tx *sql.Tx) error {
		if _, ok, err := s.q.floor(ctx, tx, fid, floorKey(key), floor); err != nil || !ok {
			if err == nil {
				err = fmt.Errorf("%w: table %s: the floor row of key %q belongs to another key", ErrCorrupt, s.table, key)
			}
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	_, err = s.journaled(ctx, "floor", key, func(_ execer, last, _ int64) (int64, []journal.Event, error) {
		if floor <= last {
			return last, nil, nil
		}
		return floor, []journal.Event{{Kind: journal.Floored, Range: sequence.Range{First: last + 1, Last: floor}}}, nil
	})
	return err
}

// Last returns key's high-water mark: the largest number reserved for it,
// or 0.
func (s *Store) Last(ctx context.Context, key string) (int64, error) {
	if err := checkKey(key); err != nil {
		return 0, err
	}
	id := hash(key)
	var k []byte
	var last int64
	err := s.retry(ctx, "read", func() error {
		err := s.db.QueryRowContext(ctx, s.q.read, id[:]).Scan(&k, &last)
		if errors.Is(err, sql.ErrNoRows) {
			k, last = []byte(key), 0
			return nil
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	if string(k) != key || last < 0 {
		return 0, fmt.Errorf("%w: table %s, row of key %q holds key %q and mark %d", ErrCorrupt, s.table, key, k, last)
	}
	return last, nil
}

// refused explains a statement that changed no row: the row belongs to
// another key with the same hash (never seen, but checked: ErrCorrupt), or
// the key has no room for what was asked.
func (s *Store) refused(ctx context.Context, key, what string) error {
	last, err := s.Last(ctx, key)
	if err != nil {
		return err
	}
	if what == "a floor" {
		return fmt.Errorf("%w: table %s: key %q: %s changed nothing", ErrCorrupt, s.table, key, what)
	}
	return fmt.Errorf("sqlseq: key %q: mark %d leaves no room for %s: %w", key, last, what, sequence.ErrExhausted)
}

func hash(key string) [32]byte { return sha256.Sum256([]byte(key)) }

// MaxKeyLen is the longest key a Store takes, in bytes: far above any
// counter key, and below the packet limits of MySQL and MariaDB (16 MiB
// and more by default), which close the connection on a larger statement.
const MaxKeyLen = 1 << 20

// checkKey refuses a key longer than MaxKeyLen.
func checkKey(key string) error {
	if len(key) > MaxKeyLen {
		return fmt.Errorf("sqlseq: a key of %d bytes, above MaxKeyLen (%d): %w", len(key), MaxKeyLen, sequence.ErrInvalidArgument)
	}
	return nil
}

// idRow is the id of the row whose k holds the ledger's identity: 32 zero
// bytes, the SHA-256 of no key anyone knows.
var idRow [32]byte

// StoreID returns the ledger's identity: "sqlseq ", the table's name when
// the identity was made, and 32 random hexadecimal digits, kept in the
// table's row of id 32 zero bytes. The first process to ask writes it;
// every process that uses the table reads the same one, and another table
// or database has another. A Redis in front of the ledger records it
// with every range (see redisseq).
func (s *Store) StoreID(ctx context.Context) (string, error) {
	if id := s.id.Load(); id != nil {
		return *id, nil
	}
	var k []byte
	var last int64
	err := s.retry(ctx, "read the ledger's identity", func() error {
		err := s.db.QueryRowContext(ctx, s.q.read, idRow[:]).Scan(&k, &last)
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		fresh := fmt.Sprintf("%s %016x%016x", s.table, rand.Uint64(), rand.Uint64())
		if err := s.write(ctx, "write the ledger's identity", func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, s.q.insert, idRow[:], []byte(fresh))
			return err
		}); err != nil {
			return err
		}
		return s.db.QueryRowContext(ctx, s.q.read, idRow[:]).Scan(&k, &last)
	})
	if err != nil {
		return "", err
	}
	id := "sqlseq " + string(k)
	s.id.Store(&id)
	return id, nil
}

// retry runs op until it succeeds, fails for a reason that is not
// transient, runs out of retries, or ctx is done; the error is classified.
func (s *Store) retry(ctx context.Context, what string, op func() error) error {
	wait := 10 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := op()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || attempt >= s.retries || !transient(err) {
			return classify(what, s.table, err, ctx)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return classify(what, s.table, err, ctx)
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}

// Package sqliteseq is a durable [sequence.Allocator] in one SQLite file,
// for the many applications on one machine that keep their data in one
// already: several processes may share the file, each with a
// [sequence.Segment] in front of its Store.
//
//	s, err := sqliteseq.Open("app.db", sqliteseq.Options{})
//	if err != nil { ... }
//	defer s.Close()
//	seq, err := sequence.NewSegment(s, sequence.SegmentOptions{})
//
// It goes through database/sql with a driver written in Go
// (modernc.org/sqlite): no cgo. The file is in write-ahead-log mode
// with synchronous=FULL, so that a commit is on disk when it returns and
// readers do not wait for writers; every write is one transaction begun
// IMMEDIATE, so that processes writing at once take turns (each waits
// up to Options.BusyTimeout). The file must be on a local disk: SQLite's
// locks do not hold over a network file system. Never delete the file's
// companions, FILE-wal and FILE-shm, while a process has it open, nor
// after one was killed: the log holds the last commits, and the shared
// memory the locks, so that SQLite would lose commits (numbers issued
// again) or let two writers in at once.
//
// Every promise sn makes of a store is written once above two things the
// Store gives: its Allocator, one transaction per range, and its records
// (package record), a table of versioned values. The journal of each
// counter (package journal) is appended in the transaction that moves
// the counter; the catalog of series, idempotency claims, named records
// and worker-id leases (snowflake.RecordLeaser) live in the records.
//
// The file holds these tables:
//
//	sn_counters  k BLOB PRIMARY KEY, last INTEGER: each key's high-water mark
//	sn_kv        k BLOB PRIMARY KEY, v BLOB, ver INTEGER: the records
//	sn_expiry    k BLOB PRIMARY KEY, deadline INTEGER: keys that expire, in Unix nanoseconds
//	sn_meta      name TEXT PRIMARY KEY, value TEXT: the file's identity, the last version of a record
package sqliteseq

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/record"
)

// MaxKeyLen is the longest counter key a Store takes, in bytes.
const MaxKeyLen = 32 << 10

// DefaultBusyTimeout is how long a write waits for another process's
// when Options.BusyTimeout is zero.
const DefaultBusyTimeout = 5 * time.Second

// Options configure [Open]. The zero value gives the defaults.
type Options struct {
	// BusyTimeout is how long a write waits while another process
	// writes the file, before it fails with an error wrapping
	// sequence.ErrUnavailable.
	// default: DefaultBusyTimeout, 5s.
	BusyTimeout time.Duration
}

// Store is a durable [sequence.Allocator] in one SQLite file. It is safe
// for concurrent use, and any number of processes may open the file.
type Store struct {
	db     *sql.DB
	path   string
	id     string
	busy   time.Duration // Options.BusyTimeout
	closed atomic.Bool
	// writing queues this process's writes, in turn: SQLite's own wait
	// for a busy file polls, and can pass a writer over for longer than
	// the busy timeout while others come and go.
	writing sync.Mutex
}

// schema makes the tables, if they do not exist.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS sn_counters (k BLOB PRIMARY KEY, last INTEGER NOT NULL) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS sn_kv (k BLOB PRIMARY KEY, v BLOB NOT NULL, ver INTEGER NOT NULL) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS sn_expiry (k BLOB PRIMARY KEY, deadline INTEGER NOT NULL) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS sn_expiry_deadline ON sn_expiry (deadline)`,
	`CREATE TABLE IF NOT EXISTS sn_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)`,
}

// Open opens the Store in the SQLite file at path, creating the file and
// its tables if they do not exist. The file's directory must exist. A
// file that is not SQLite gives an error saying so.
func Open(path string, o Options) (*Store, error) {
	if o.BusyTimeout < 0 {
		return nil, fmt.Errorf("sqliteseq: Options{BusyTimeout: %v}: negative: %w", o.BusyTimeout, sequence.ErrInvalidArgument)
	}
	if o.BusyTimeout == 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if path == "" {
		return nil, fmt.Errorf("sqliteseq: Open with no path: %w", sequence.ErrInvalidArgument)
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("sqliteseq: open %s: the directory %s does not exist: %w", path, filepath.Dir(path), sequence.ErrInvalidArgument)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqliteseq: open %s: %w", path, err)
	}
	s := &Store{db: db, path: path, busy: o.BusyTimeout}
	ctx := context.Background()
	// Write-ahead logging is the file's, kept once set: set here, once,
	// and not by each connection, which would take turns on the file.
	var mode string
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode); err != nil || mode != "wal" {
		db.Close()
		if err == nil {
			err = fmt.Errorf("the journal mode is %q, not wal", mode)
		}
		return nil, s.wrap("open "+path, err)
	}
	err = s.write(ctx, "create the tables", func(tx *sql.Tx) error {
		for _, q := range schema {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO sn_meta (name, value) VALUES ('id', ?), ('ver', '0')`, "sqlite:"+rand.Text())
		if err != nil {
			return err
		}
		// The versions' counter is never below a version given: a row
		// deleted or set back by hand would give versions twice, and a
		// condition would hold over a write it never saw.
		if _, err := tx.ExecContext(ctx, `UPDATE sn_meta SET value = (SELECT max(ver) FROM sn_kv)
WHERE name = 'ver' AND (SELECT max(ver) FROM sn_kv) > CAST(value AS INTEGER) AND CAST(CAST(value AS INTEGER) AS TEXT) = value`); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT value FROM sn_meta WHERE name = 'id'`).Scan(&s.id)
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqliteseq: open %s: %w", path, err)
	}
	return s, nil
}

// Path returns the path of the Store's file, as given to [Open].
func (s *Store) Path() string { return s.path }

// StoreID returns the file's identity, written when it was made; a copy
// of the file has the same.
func (s *Store) StoreID(context.Context) (string, error) { return s.id, nil }

// Ping reads the file: a [sequence.Pinger].
func (s *Store) Ping(ctx context.Context) error {
	return s.read(ctx, "ping", func() error {
		var one int
		return s.db.QueryRowContext(ctx, `SELECT 1 FROM sn_meta LIMIT 1`).Scan(&one)
	})
}

// Close closes the Store; later calls return an error wrapping
// [sequence.ErrClosed]. Closing twice returns ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return fmt.Errorf("sqliteseq: close %s: %w", s.path, sequence.ErrClosed)
	}
	return s.db.Close()
}

// Allocate reserves the n numbers after key's high-water mark and raises
// the mark past them, with the journal's record, in one durable
// transaction. The first range of a new key starts at 1. n < 1, or a key
// longer than [MaxKeyLen], gives an error wrapping
// [sequence.ErrInvalidArgument]; a range past math.MaxInt64 one wrapping
// [sequence.ErrExhausted], and reserves nothing.
func (s *Store) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	if n < 1 {
		return sequence.Range{}, fmt.Errorf("sqliteseq: allocate %.64q with n=%d: %w", key, n, sequence.ErrInvalidArgument)
	}
	var r sequence.Range
	err := s.counter(ctx, "allocate", key, func(tx *sql.Tx, last int64) (int64, []journal.Event, error) {
		if last > math.MaxInt64-n {
			return 0, nil, fmt.Errorf("sqliteseq: allocate %.64q: %d numbers after %d would pass %d: %w", key, n, last, int64(math.MaxInt64), sequence.ErrExhausted)
		}
		r = sequence.Range{First: last + 1, Last: last + n}
		return r.Last, []journal.Event{{Kind: journal.AllocateKind(ctx), Range: r}}, nil
	})
	if err != nil {
		return sequence.Range{}, err
	}
	return r, nil
}

// Floor raises key's high-water mark to floor if it is lower, so that
// every later number is greater, in one durable transaction. A negative
// floor is an error wrapping [sequence.ErrInvalidArgument].
func (s *Store) Floor(ctx context.Context, key string, floor int64) error {
	if floor < 0 {
		return fmt.Errorf("sqliteseq: floor %.64q to %d: negative: %w", key, floor, sequence.ErrInvalidArgument)
	}
	return s.counter(ctx, "floor", key, func(tx *sql.Tx, last int64) (int64, []journal.Event, error) {
		if last >= floor {
			return last, nil, nil
		}
		return floor, []journal.Event{{Kind: journal.Floored, Range: sequence.Range{First: last + 1, Last: floor}}}, nil
	})
}

// now returns this machine's clock, by which [Store.Expire] keeps its
// deadlines, for the processes that share the file share it, the clock of its records. It fails only on a closed Store or a done ctx.
func (s *Store) now(ctx context.Context) (time.Time, error) {
	if err := s.usable(ctx, "now"); err != nil {
		return time.Time{}, err
	}
	return time.Now(), nil
}

// Expire deletes key once ttl has passed: a [sequence.Expirer]. The
// deletion happens in a later Expire, which first deletes every key past
// its deadline; a ttl <= 0 deletes key at once. A deleted key's counter
// is gone, but its journal keeps its head and refuses to draw from it
// again (journal.ErrBehind): its numbers would be issued twice.
func (s *Store) Expire(ctx context.Context, key string, ttl time.Duration) error {
	if err := checkKey(key); err != nil {
		return err
	}
	now := time.Now().UnixNano()
	return s.write(ctx, "expire", func(tx *sql.Tx) error {
		// The key's own deadline first, so that the sweep after it does
		// not delete a key this call gives more time.
		if ttl <= 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM sn_counters WHERE k = ?`, []byte(key)); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM sn_expiry WHERE k = ?`, []byte(key)); err != nil {
				return err
			}
		} else if _, err := tx.ExecContext(ctx, `INSERT INTO sn_expiry (k, deadline) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET deadline = excluded.deadline`,
			[]byte(key), now+min(int64(ttl), math.MaxInt64-now)); err != nil { // past 2262, at the end of time
			return err
		}
		for _, q := range []string{
			`DELETE FROM sn_counters WHERE k IN (SELECT k FROM sn_expiry WHERE deadline <= ?)`,
			`DELETE FROM sn_expiry WHERE deadline <= ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// counter runs change on key's mark in one transaction: change returns
// the new mark and the journal's records of the change; the mark is
// written, and the records appended, only if it moved or there are
// records.
func (s *Store) counter(ctx context.Context, op, key string, change func(tx *sql.Tx, last int64) (int64, []journal.Event, error)) error {
	if err := checkKey(key); err != nil {
		return fmt.Errorf("sqliteseq: %s: %w", op, err)
	}
	return s.write(ctx, op, func(tx *sql.Tx) error {
		var v any
		err := tx.QueryRowContext(ctx, `SELECT last FROM sn_counters WHERE k = ?`, []byte(key)).Scan(&v)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		last, ok := v.(int64)
		if v != nil && (!ok || last < 0) {
			return fmt.Errorf("%w: the counter %.64q holds %v, not a number at or above 0", ErrCorrupt, key, v)
		}
		mark, es, err := change(tx, last)
		if err != nil || (mark == last && len(es) == 0) {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sn_counters (k, last) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET last = excluded.last`, []byte(key), mark); err != nil {
			return err
		}
		if len(es) == 0 {
			return nil
		}
		// The journal's records, chained after its head, in this
		// transaction.
		return journal.Overwrite(key, inRecords(ctx, tx, func(rt *record.Tx) error {
			_, err := journal.Append(rt, key, last, mark, es...)
			return err
		}))
	})
}

// ErrCorrupt is wrapped by the error of a call that found the file's
// content other than sqliteseq writes it: a counter below zero, a record
// without a version.
var ErrCorrupt = errors.New("sqliteseq: corrupt data")

// checkKey refuses a key longer than MaxKeyLen.
func checkKey(key string) error {
	if len(key) > MaxKeyLen {
		return fmt.Errorf("sqliteseq: key of %d bytes, longer than %d: %w", len(key), MaxKeyLen, sequence.ErrInvalidArgument)
	}
	return nil
}

// usable refuses a call on a closed Store or with a done ctx.
func (s *Store) usable(ctx context.Context, what string) error {
	if s.closed.Load() {
		return fmt.Errorf("sqliteseq: %s: %w", what, sequence.ErrClosed)
	}
	return ctx.Err()
}

// write runs fn in one IMMEDIATE transaction, and commits it. A
// transaction the file refused as busy (another connection's, beyond
// what SQLite's own wait covers: a connection that opens as another
// recovers the log) is tried again, for up to the busy timeout.
func (s *Store) write(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	if err := s.usable(ctx, what); err != nil {
		return err
	}
	deadline, pause := time.Now().Add(s.busy), time.Millisecond
	for {
		err := s.try(ctx, fn)
		if err == nil || !busy(err) || time.Now().After(deadline) {
			return s.wrap(what, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// try runs fn in one transaction, and commits it.
func (s *Store) try(ctx context.Context, fn func(tx *sql.Tx) error) error {
	s.writing.Lock()
	defer s.writing.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// busy reports whether err is SQLite's: the file is busy, or locked.
func busy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code()&0xff == sqlite3.SQLITE_BUSY || se.Code()&0xff == sqlite3.SQLITE_LOCKED)
}

// read runs fn, a read outside a transaction.
func (s *Store) read(ctx context.Context, what string, fn func() error) error {
	if err := s.usable(ctx, what); err != nil {
		return err
	}
	return s.wrap(what, fn())
}

// wrap says what failed, and classifies the driver's errors: a file
// another process held past the busy timeout is unavailable.
func (s *Store) wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite.Error
	switch {
	case busy(err):
		return fmt.Errorf("sqliteseq: %s (%s): another process held the file past the busy timeout: %w: %w", what, s.path, sequence.ErrUnavailable, err)
	case errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("sqliteseq: %s: %s is not an SQLite database: %w", what, s.path, err)
	case errors.Is(err, sql.ErrConnDone) || s.closed.Load():
		return fmt.Errorf("sqliteseq: %s: %w: %w", what, sequence.ErrClosed, err)
	case strings.HasPrefix(err.Error(), "sqliteseq:") || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err // says what it is already
	}
	return fmt.Errorf("sqliteseq: %s: %w", what, err)
}

// Schema returns the statements that make a Store's tables, each only if
// it does not exist, as Open runs them: for a reviewer (sn ddl). SQLite
// has no roles: whoever may write the file may write the tables.
func Schema() []string { return slices.Clone(schema) }

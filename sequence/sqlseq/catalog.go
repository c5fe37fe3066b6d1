package sqlseq

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/sngen/sn/sequence"
)

// catalogLock is the record whose row lock serialises enrollments.
const catalogLock = "sn catalog lock"

// Enroll records e in the ledger's catalog (the ledger's name and
// "_catalog") unless an entry with its ID is there, after check accepts
// every entry recorded: a [sequence.Catalog]. An enrollment holds a row
// lock of the table of records from reading the entries to recording e,
// so that of processes on many machines enrolling at once each proves
// against the entries of all that came before it. A ledger made before
// the catalog gets its table at the first enrollment.
func (s *Store) Enroll(ctx context.Context, e sequence.Entry, check func([]sequence.Entry) error) (sequence.Entry, error) {
	if err := sequence.CheckEntry(e); err != nil {
		return sequence.Entry{}, err
	}
	if err := s.catalogReady(ctx); err != nil {
		return sequence.Entry{}, err
	}
	var got sequence.Entry
	found := false
	err := s.retry(ctx, "read the catalog", func() error {
		var err error
		got, found, err = s.entry(ctx, s.db, e.ID)
		return err
	})
	if err != nil || found {
		return got, err
	}
	var refused error
	added := false
	err = s.retry(ctx, "enroll in the catalog", func() error {
		refused, added = nil, false
		tx, after, err := s.begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, s.q.lockCatalog, []byte(catalogLock)); err != nil {
			return err
		}
		if got, found, err = s.entry(ctx, tx, e.ID); err != nil || found {
			return err
		}
		es, err := s.entries(ctx, tx)
		if err != nil {
			return err
		}
		if refused = check(es); refused != nil {
			return nil
		}
		if _, err := tx.ExecContext(ctx, s.q.addEntry, e.ID, e.Name, e.Spec, e.By); err != nil {
			return err
		}
		added = true
		if got, found, err = s.entry(ctx, tx, e.ID); err != nil {
			return err
		}
		return s.commit(ctx, tx, after)
	})
	if refused != nil {
		return sequence.Entry{}, refused
	}
	if err == nil && !found {
		err = errors.New("sqlseq: enroll: the entry recorded is not found")
	}
	if err == nil && got.ID == e.ID && got.Spec == e.Spec && got.By == e.By && added {
		sequence.NoteCatalog(ctx, s, sequence.Enrolled, got)
	}
	return got, err
}

// catalogReady creates the catalog's table and the record whose lock
// serialises enrollments, once per Store.
func (s *Store) catalogReady(ctx context.Context) error {
	if s.catalogOK.Load() {
		return nil
	}
	if err := s.Migrate(ctx); err != nil {
		return err
	}
	if _, err := s.Record(ctx, catalogLock, "the row whose lock serialises enrollments in the catalog"); err != nil {
		return err
	}
	s.catalogOK.Store(true)
	return nil
}

// Entries returns the ledger's catalog, oldest first: a
// [sequence.Catalog].
func (s *Store) Entries(ctx context.Context) ([]sequence.Entry, error) {
	if err := s.catalogReady(ctx); err != nil {
		return nil, err
	}
	var es []sequence.Entry
	err := s.retry(ctx, "read the catalog", func() error {
		var err error
		es, err = s.entries(ctx, s.db)
		return err
	})
	return es, err
}

// Forget removes the entry with id from the ledger's catalog: a
// [sequence.Catalog].
func (s *Store) Forget(ctx context.Context, id string) (bool, error) {
	if err := s.catalogReady(ctx); err != nil {
		return false, err
	}
	var n int64
	err := s.write(ctx, "forget a catalog entry", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q.deleteEntry, id)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err == nil && n > 0 {
		sequence.NoteCatalog(ctx, s, sequence.Forgotten, sequence.Entry{ID: id})
	}
	return n > 0, err
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) entry(ctx context.Context, q querier, id string) (sequence.Entry, bool, error) {
	var e sequence.Entry
	var us int64
	err := q.QueryRowContext(ctx, s.q.readEntry, id).Scan(&e.ID, &e.Name, &e.Spec, &us, &e.By)
	if errors.Is(err, sql.ErrNoRows) {
		return e, false, nil
	}
	e.First = time.UnixMicro(us).UTC()
	return e, err == nil, err
}

func (s *Store) entries(ctx context.Context, q querier) ([]sequence.Entry, error) {
	rows, err := q.QueryContext(ctx, s.q.readEntries)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var es []sequence.Entry
	for rows.Next() {
		var e sequence.Entry
		var us int64
		if err := rows.Scan(&e.ID, &e.Name, &e.Spec, &us, &e.By); err != nil {
			return nil, err
		}
		e.First = time.UnixMicro(us).UTC()
		es = append(es, e)
	}
	return es, rows.Err()
}

var _ sequence.Catalog = (*Store)(nil)

// Enroll records e in the catalog of the Leaser's ledger (a
// [sequence.Catalog]).
func (l *Leaser) Enroll(ctx context.Context, e sequence.Entry, check func([]sequence.Entry) error) (sequence.Entry, error) {
	return l.s.Enroll(ctx, e, check)
}

// Entries returns the catalog of the Leaser's ledger.
func (l *Leaser) Entries(ctx context.Context) ([]sequence.Entry, error) { return l.s.Entries(ctx) }

// Forget removes an entry of the catalog of the Leaser's ledger.
func (l *Leaser) Forget(ctx context.Context, id string) (bool, error) { return l.s.Forget(ctx, id) }

var _ sequence.Catalog = (*Leaser)(nil)

// Claim claims an idempotency key in the Leaser's ledger (see
// [sequence.Replayer]), for the ids of a snowflake Gen that leases its
// worker there.
func (l *Leaser) Claim(ctx context.Context, id, digest, token string, lease time.Duration) (sequence.Claim, error) {
	return l.s.Claim(ctx, id, digest, token, lease)
}

// Settle records the answer of a claim in the Leaser's ledger.
func (l *Leaser) Settle(ctx context.Context, id, token, answer string, keep time.Duration) error {
	return l.s.Settle(ctx, id, token, answer, keep)
}

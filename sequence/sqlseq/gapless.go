package sqlseq

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/record"
)

// Gapless is a [sequence.Gen] for series that must have no gaps, such as
// the invoice numbers many tax laws demand: it draws each number inside the
// caller's own transaction, which the context carries ([WithTx]). The
// key's row is raised in that transaction and rolled back with it, so the
// numbers of committed transactions are exactly 1, 2, 3... with no gap and
// no repeat. Concurrent callers for one key queue on the row's lock until
// the transaction that holds it ends, as long as their context allows;
// none fails for want of the lock (no NOWAIT). That holds at READ
// COMMITTED, the default of PostgreSQL, and at every level of MySQL. At
// PostgreSQL's REPEATABLE READ or SERIALIZABLE, a caller that waited for
// the row gets a serialization failure (an error wrapping
// [sequence.ErrUnavailable]) when the holder commits, and must retry its
// whole transaction: draw gapless numbers at READ COMMITTED. Two
// transactions that draw two keys in opposite orders deadlock, as they
// would over any two rows: the database reports it at once.
//
// On MySQL, the first draw of a key through a Store reads its row, and makes
// it if missing, outside the transaction on another connection of the
// Store's *sql.DB: the pool must allow more
// connections than the transactions that draw at once.
//
// The price is that the key is serialized: one transaction at a time
// draws from it, for as long as the transaction lasts. Keep such
// transactions short, and use a [sequence.Segment] over a [Store] for
// everything that may have gaps.
//
// Each draw checks the ledger's replication in the caller's transaction,
// as the Store's own transactions do ([Store.CheckReplication]), and on
// PostgreSQL raises its synchronous_commit, so that a committed invoice
// number is on a synchronous standby. On MariaDB the Store cannot read,
// after the caller commits, whether the primary still waited for a
// replica (rpl_semi_sync_master_timeout): set the timeout above any
// outage a failover may follow.
//
// A key drawn by Gapless must be drawn by nothing else: a block reserved
// for it with [Store.Allocate] would be a gap. Gapless implements
// [sequence.Batcher] (n consecutive numbers in one statement) and
// [journal.Keeper]. Every draw appends a Drawn record to the key's
// journal in the caller's transaction, committed or rolled back with it.
// Outside a transaction, a number is held ([Gapless.Hold]) and then
// committed or voided; a void ([Gapless.Void]) is the only way a number
// leaves the series unused, and the journal says why.
type Gapless struct {
	s *Store
}

// Gapless returns the gapless Gen over the Store's ledger.
func (s *Store) Gapless() *Gapless { return &Gapless{s: s} }

type txKey struct{}

// txOf returns the transaction ctx carries (WithTx), or nil.
func txOf(ctx context.Context) *sql.Tx {
	tx, _ := ctx.Value(txKey{}).(*sql.Tx)
	return tx
}

// Transact runs fn in a transaction of the Store's database, at READ
// COMMITTED, and commits it when fn returns nil: a [sequence.Transactor].
// Everything Gapless does for fn (draws, holds, their commits and voids,
// the journal, an idempotency key's claim and answer) is in that
// transaction, committed together or not at all. A ctx that carries a
// transaction already (WithTx) is used as it is, and the caller commits.
// The commit waits for a synchronous standby, as every write of the
// Store's does; a commit whose outcome is not known (the connection
// lost) is an error, and what fn drew may have been committed: a request
// retried with an idempotency key finds out which.
func (g *Gapless) Transact(ctx context.Context, fn func(ctx context.Context) error) error {
	if txOf(ctx) != nil {
		return fn(ctx)
	}
	s := g.s
	tx, a, err := s.begin(ctx)
	if err != nil {
		return classify("begin a gapless transaction", s.table, err, ctx)
	}
	defer tx.Rollback() // after a commit, a no-op
	if err := fn(WithTx(ctx, tx)); err != nil {
		return err
	}
	if err := s.commit(ctx, tx, a); err != nil {
		return classify("commit a gapless transaction", s.table, err, ctx)
	}
	return nil
}

// journaled is the Store's journaled write, in the context's transaction
// when it carries one, which the caller commits.
func (g *Gapless) journaled(ctx context.Context, what, key string, op func(tx execer, last, journaled int64) (int64, []journal.Event, error)) ([]journal.Event, error) {
	tx := txOf(ctx)
	if tx == nil {
		return g.s.journaled(ctx, what, key, op)
	}
	if err := checkKey(key); err != nil {
		return nil, err
	}
	s := g.s
	if err := g.prepare(ctx, key); err != nil {
		return nil, err
	}
	id := hash(key)
	if err := g.ensureFor(ctx, tx, id, key); err != nil {
		return nil, classify(what+": the key's row", s.table, err, ctx)
	}
	a, err := s.guard(ctx, tx)
	if err != nil {
		return nil, classify(what+": the ledger's replication", s.table, err, ctx)
	}
	out, err := s.journaledIn(ctx, tx, a, id, key, op)
	if err != nil {
		return nil, classify(what, s.table, err, ctx)
	}
	return out, nil
}

// ensureFor makes key's row and journal head exist before tx locks them:
// outside the transaction, on another connection, unless tx sees them
// already (it made them, or they were committed before it read them). An
// insert of a row that tx has made or changed (a draw before this hold
// in it) would wait for tx, which waits for the insert; so outside, they
// are made only when a plain read of the latest committed rows finds
// them missing.
func (g *Gapless) ensureFor(ctx context.Context, tx *sql.Tx, id [32]byte, key string) error {
	s := g.s
	if _, ok := s.rows.Load(id); ok {
		return nil
	}
	var seen int
	err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM `+s.q.quoted+` WHERE id = `+s.args(0, 1)+`) + (SELECT count(*) FROM `+s.kvTable()+` WHERE ver <> 0 AND k = `+s.args(1, 1)+`)`,
		id[:], []byte(journal.HeadKey(key))).Scan(&seen)
	if err != nil || seen == 2 {
		return err
	}
	var one int
	err = s.db.QueryRowContext(ctx, `SELECT 1 FROM `+s.q.quoted+` WHERE id = `+s.args(0, 1), id[:]).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return s.ensureRow(ctx, id, key)
	}
	if err != nil {
		return err
	}
	if err := s.ensureHead(ctx, key); err != nil {
		return err
	}
	s.rows.Store(id, struct{}{})
	return nil
}

// prepare runs the Store's migration before the first write of key in
// the context's transaction: on another connection than the
// transaction's.
func (g *Gapless) prepare(ctx context.Context, key string) error {
	s := g.s
	if s.kvOK.Load() {
		return nil
	}
	if s.db.Stats().MaxOpenConnections == 1 {
		return fmt.Errorf("sqlseq: gapless draw of key %q: the Store has not run Migrate, and the *sql.DB allows one connection (SetMaxOpenConns(1)), which the transaction holds: call Migrate first: %w", key, sequence.ErrInvalidArgument)
	}
	return s.migrated(ctx)
}

// WithTx returns a context that carries tx, for [Gapless] to draw in. sn
// renders a template with such a context like any other
// (g.Next(sqlseq.WithTx(ctx, tx))): the transaction travels with the call,
// not through sn's API, so that sn knows nothing of SQL and every
// Generator, template and option works in a transaction unchanged. The
// transaction must belong to the database of the Store.
func WithTx(ctx context.Context, tx *sql.Tx) context.Context {
	return context.WithValue(ctx, txKey{}, tx)
}

// ErrNoTx means Gapless was called without a transaction in its context.
var ErrNoTx = fmt.Errorf("sqlseq: gapless numbers need a transaction: draw in yours (sqlseq.WithTx), or in one of their own (sn.Generator.Transact): %w", sequence.ErrInvalidArgument)

// Next draws key's next number in the context's transaction.
func (g *Gapless) Next(ctx context.Context, key string) (int64, error) {
	last, err := g.draw(ctx, key, 1)
	return last, err
}

// NextN appends n consecutive numbers of key to dst, drawn in the
// context's transaction with one statement.
func (g *Gapless) NextN(ctx context.Context, key string, dst []int64, n int) ([]int64, error) {
	if n < 0 {
		return dst, fmt.Errorf("sqlseq: NextN(%d): %w", n, sequence.ErrInvalidArgument)
	}
	if n == 0 {
		return dst, nil
	}
	last, err := g.draw(ctx, key, int64(n))
	if err != nil {
		return dst, err
	}
	for v := last - int64(n) + 1; v <= last; v++ {
		dst = append(dst, v)
	}
	return dst, nil
}

// draw raises key's mark by n in the context's transaction. It does not
// retry: a failed statement may have aborted the transaction, which is the
// caller's to retry as a whole.
func (g *Gapless) draw(ctx context.Context, key string, n int64) (int64, error) {
	tx := txOf(ctx)
	if tx == nil {
		return 0, ErrNoTx
	}
	if err := checkKey(key); err != nil {
		return 0, err
	}
	s := g.s
	id := hash(key)
	if err := g.prepare(ctx, key); err != nil {
		return 0, err
	}
	if s.q.ensure != "" {
		if err := g.ensure(ctx, id, key); err != nil {
			return 0, err
		}
	}
	// The caller's transaction commits the number: it waits for a
	// synchronous standby as the Store's own do.
	if _, err := s.guard(ctx, tx); err != nil {
		return 0, classify("gapless draw: the ledger's replication", s.table, err, ctx)
	}
	last, found, err := s.q.draw(ctx, tx, id, key, n)
	if err != nil {
		return 0, classify("gapless draw", s.table, err, ctx)
	}
	if !found {
		if s.q.ensure != "" {
			// The row exists in the Store's database (ensure saw it): a
			// transaction that finds none is in another database.
			if last, err := s.Last(ctx, key); err == nil && last <= math.MaxInt64-n {
				return 0, fmt.Errorf("sqlseq: gapless draw of key %q: the transaction finds no row of it in table %s, which the Store's database has (mark %d): "+
					"is it a transaction of another database? %w", key, s.table, last, sequence.ErrInvalidArgument)
			}
		}
		return 0, s.refused(ctx, key, fmt.Sprintf("%d more numbers", n))
	}
	_, err = s.appendIn(ctx, &txRecords{s: s, tx: tx}, id, key, last-n, last, func(journal.Head) (int64, []journal.Event, error) {
		return last, []journal.Event{{Kind: journal.Drawn, Range: sequence.Range{First: last - n + 1, Last: last}}}, nil
	})
	if err != nil {
		return 0, classify("gapless draw: the journal", s.table, err, ctx)
	}
	return last, nil
}

// ensure makes key's row exist, on MySQL, before the caller's transaction
// touches it, once per key and Store (every Gapless of the Store shares
// what it has seen).
//
// The transaction must lock nothing but the row: an UPDATE of a missing
// row locks the gap where it belongs, and making the row would then wait
// for that lock. So the row is read, and made if missing, outside the
// transaction, on another connection of the Store's database, with plain
// statements that commit at once: a read of the latest committed rows
// (the transaction's own snapshot may be older than the row) that waits
// for no lock, then INSERT IGNORE. Rows are never deleted, so a key seen
// once is not looked at again, and the transaction's only statement is
// the UPDATE, whose wait for another transaction InnoDB sees (a deadlock
// is reported at once, never a wait that no one can end).
//
// A pool of one connection, held by the transaction, leaves none for this:
// that is an error, not a wait.
func (g *Gapless) ensure(ctx context.Context, id [32]byte, key string) error {
	s := g.s
	if _, ok := s.rows.Load(id); ok {
		return nil
	}
	if s.db.Stats().MaxOpenConnections == 1 {
		return fmt.Errorf("sqlseq: gapless draw of the new key %q: on MySQL its row is made outside the transaction, "+
			"on another connection, and the *sql.DB allows one (SetMaxOpenConns(1)): allow at least one more than the transactions that draw at once: %w",
			key, sequence.ErrInvalidArgument)
	}
	err := s.retry(ctx, "gapless row", func() error {
		var one int
		err := s.db.QueryRowContext(ctx, s.q.exists, id[:]).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			_, err = s.db.ExecContext(ctx, s.q.ensure, id[:], []byte(key))
		}
		if err != nil {
			return err
		}
		// The journal's head likewise: read, and made only if missing.
		return s.ensureHead(ctx, key)
	})
	if err != nil {
		return err
	}
	s.rows.Store(id, struct{}{})
	return nil
}

// Hold is a gapless number reserved outside a transaction, to be
// committed or voided by its Deadline: see [Gapless.Hold].
type Hold = sequence.Hold

// ErrNotHeld means a number given to [Gapless.Commit] is not held: it
// was committed or voided already, or never held.
var ErrNotHeld = fmt.Errorf("sqlseq: the number is not held: %w", sequence.ErrInvalidArgument)

// Hold reserves key's next number for a document that becomes final
// later: the number is taken at once, in a transaction of its own (or
// the context's, [WithTx], [Gapless.Transact]), and the journal records
// it as held until now plus ttl. The caller then commits it ([Gapless.Commit]) when the
// document is final, or voids it ([Gapless.Void]). A hold neither
// committed nor voided by its deadline is not lost: an audit of the
// journal ([journal.Audit], sn gaps) reports it as lapsed, and fails,
// until someone commits or voids it; a late Commit is still taken.
//
// Use Hold where the document's own transaction cannot draw the number
// (it is on another database, or a person completes it); draw in the
// transaction ([WithTx]) where it can.
func (g *Gapless) Hold(ctx context.Context, key string, ttl time.Duration) (Hold, error) {
	if ttl <= 0 {
		return Hold{}, fmt.Errorf("sqlseq: hold a number of key %q for %v: want a positive time: %w", key, ttl, sequence.ErrInvalidArgument)
	}
	s := g.s
	var h Hold
	_, err := g.journaled(ctx, "hold", key, func(tx execer, last, _ int64) (int64, []journal.Event, error) {
		if last == math.MaxInt64 {
			return 0, nil, fmt.Errorf("sqlseq: key %q: mark %d leaves no room for a hold: %w", key, last, sequence.ErrExhausted)
		}
		h = Hold{Key: key, N: last + 1, Deadline: time.Now().Add(ttl).Truncate(time.Microsecond)}
		id := hash(key)
		if _, err := tx.ExecContext(ctx, s.q.addHold, id[:], h.N, h.Deadline.UnixMicro()); err != nil {
			return 0, nil, err
		}
		return h.N, []journal.Event{{Kind: journal.Held, Range: sequence.Range{First: h.N, Last: h.N}, Deadline: h.Deadline}}, nil
	})
	if err != nil {
		return Hold{}, err
	}
	return h, nil
}

// Commit makes the held number n of key final: the journal records it
// committed. A number not held (committed or voided already, or never
// held) gives an error wrapping [ErrNotHeld], and records nothing.
func (g *Gapless) Commit(ctx context.Context, key string, n int64) error {
	_, err := g.journaled(ctx, "commit", key, func(tx execer, last, _ int64) (int64, []journal.Event, error) {
		if err := g.s.unhold(ctx, tx, key, n, "commit number"); err != nil {
			return 0, nil, err
		}
		return last, []journal.Event{{Kind: journal.Committed, Range: sequence.Range{First: n, Last: n}}}, nil
	})
	return err
}

// unhold ends the hold of number n of key in tx, or returns an error
// wrapping ErrNotHeld, saying what it was for, when there is none.
func (s *Store) unhold(ctx context.Context, tx execer, key string, n int64, what string) error {
	id := hash(key)
	res, err := tx.ExecContext(ctx, s.q.deleteHold, id[:], n)
	if err != nil {
		return err
	}
	if k, err := res.RowsAffected(); err != nil {
		return err
	} else if k != 1 {
		return fmt.Errorf("sqlseq: %s %d of key %q: %w", what, n, key, ErrNotHeld)
	}
	return nil
}

// Void records number n of key as void, with reason: a held number whose
// document was abandoned, or a committed one cancelled. It stays used,
// and the journal says why; for a gapless series it is the only way a
// number leaves the series unused.
func (g *Gapless) Void(ctx context.Context, key string, n int64, reason string) error {
	_, err := g.Note(ctx, key, journal.Event{Kind: journal.Voided, Range: sequence.Range{First: n, Last: n}, Reason: reason})
	return err
}

// VoidHold voids the held number n of key, with reason and the actor who
// voids it ("" for nobody named): its document was abandoned. A number
// not held (committed or voided already, or never held) gives an error
// wrapping [ErrNotHeld], and records nothing, so that whoever may hold
// numbers may abandon them without being able to void a committed one
// ([Gapless.Void] voids any).
func (g *Gapless) VoidHold(ctx context.Context, key string, n int64, reason, actor string) error {
	s := g.s
	e := journal.Event{Kind: journal.Voided, Range: sequence.Range{First: n, Last: n}, Reason: reason, Actor: actor}
	_, err := g.journaled(ctx, "void a hold", key, func(tx execer, last, journaled int64) (int64, []journal.Event, error) {
		if err := s.unhold(ctx, tx, key, n, "void the hold of number"); err != nil {
			return 0, nil, err
		}
		return s.noteOp(ctx, tx, key, e, last, journaled)
	})
	return err
}

// Note appends e to key's journal in the Store's ledger, in the context's
// transaction when it carries one: a [journal.Keeper], so that sn's
// Generator.Void reaches a gapless series.
func (g *Gapless) Note(ctx context.Context, key string, e journal.Event) (journal.Event, error) {
	out, err := g.journaled(ctx, "note", key, func(tx execer, last, journaled int64) (int64, []journal.Event, error) {
		return g.s.noteOp(ctx, tx, key, e, last, journaled)
	})
	if err != nil {
		return journal.Event{}, err
	}
	return out[len(out)-1], nil
}

// Events reads key's journal in the Store's ledger.
func (g *Gapless) Events(ctx context.Context, key string, after int64, limit int) ([]journal.Event, error) {
	return g.s.Events(ctx, key, after, limit)
}

// Head returns where key's journal in the Store's ledger ends.
func (g *Gapless) Head(ctx context.Context, key string) (journal.Head, error) {
	return g.s.Head(ctx, key)
}

// Floor raises key's mark to floor, so that the series continues above
// it: a series moved from another system, whose numbers up to floor were
// issued there. The journal records the numbers skipped, so that an
// audit explains them (sn gaps says "skipped by a floor"). A floor at or
// below the mark changes nothing.
func (g *Gapless) Floor(ctx context.Context, key string, floor int64) error {
	return g.s.Floor(ctx, key, floor)
}

// Continuous reports true: Gapless issues every number of a key, in
// order, without a gap (a [sequence.Continuous]).
func (g *Gapless) Continuous() bool { return true }

// Prune prunes key's journal in the Store's ledger (see
// [journal.Keeper]).
func (g *Gapless) Prune(ctx context.Context, key string, p journal.Event) (journal.Event, error) {
	return g.s.Prune(ctx, key, p)
}

// Records returns the records of the Store's ledger (see
// [Store.Records]), where the catalog is kept: a gapless template is
// proven against every template drawn from the ledger, and they against
// it, as a Segment's is. An edit that would print a number of the
// template before it (dropping its reset=year) is refused, not committed
// twice.
//
// The records are read and written in the context's transaction when it
// carries one (WithTx), so that the claim of an idempotency key and its
// answer commit or roll back with the numbers drawn for it: a retry never
// gets numbers that were rolled back.
func (g *Gapless) Records() record.Store { return records{s: g.s, inTx: true} }

var (
	_ sequence.Transactor = (*Gapless)(nil)
	_ sequence.Holder     = (*Gapless)(nil)
)

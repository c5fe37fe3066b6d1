package sqlseq_test

// Regression tests from an adversarial review of the ledger: each test
// below reproduced a repeat, a hang or a misreported error before its fix,
// as its comment describes.
import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sqlseq"
)

// On MySQL, Gapless makes the key's row exist with an INSERT IGNORE on
// another connection, outside the caller's transaction, the first time
// each Gapless value sees the key. INSERT IGNORE of a row that exists waits
// for a shared lock on it; if a transaction holds the row's exclusive lock,
// it waits for that transaction to end. When the waiting caller's own
// transaction is part of the chain, InnoDB cannot see the cycle (one edge
// is inside the Go process) and nothing breaks it until
// innodb_lock_wait_timeout (50s) — and then the statement is retried 8
// times, so the caller hangs for minutes or until its context ends.
//
// Two processes (two Gapless values, g1 and g2), two gapless series A and
// B. T2 (process 2, which has seen both keys) draws B, then A. T1 (process
// 1, fresh) draws A, then B. On PostgreSQL, or with both rows known, InnoDB
// reports a deadlock at once and one of them is retried by its caller.
// Here, both hang.
func TestAdversaryGaplessEnsureHidesDeadlock(t *testing.T) {
	b := mysqlBackend()
	db := b.open(t)
	s := newStore(t, b, db, sqlseq.Options{})
	g1, g2 := s.Gapless(), s.Gapless()
	ctx := context.Background()

	// Process 2 has drawn both keys before (its rows cache knows them).
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"A", "B"} {
		if _, err := g2.Next(sqlseq.WithTx(ctx, tx), k); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	t1, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer t1.Rollback()
	t2, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer t2.Rollback()
	if _, err := g2.Next(sqlseq.WithTx(ctx, t2), "B"); err != nil {
		t.Fatal(err)
	}
	if _, err := g1.Next(sqlseq.WithTx(ctx, t1), "A"); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, errs[0] = g1.Next(sqlseq.WithTx(ctx, t1), "B") // waits in the ensure for T2
	}()
	go func() {
		defer wg.Done()
		time.Sleep(200 * time.Millisecond)
		_, errs[1] = g2.Next(sqlseq.WithTx(ctx, t2), "A") // waits for T1: a cycle
	}()
	wg.Wait()
	took := time.Since(start)
	t.Logf("T1 draws B: %v; T2 draws A: %v; after %v", errs[0], errs[1], took)
	if took > 3*time.Second {
		t.Errorf("a deadlock between two gapless transactions went undetected for %v (until the callers' contexts ended): the ensure statement, on another connection, hides it from InnoDB", took.Round(time.Millisecond))
	}
}

// The same cycle with one Gapless value in one process and one transaction:
// a second Generator (its own Gapless, as sn.WithSequence("seq",
// ledger.Gapless()) per template gives) draws a key the transaction has
// already drawn through the first. Its ensure waits on the caller's own
// transaction: a self-deadlock.
func TestAdversaryGaplessTwoGeneratorsOneTx(t *testing.T) {
	b := mysqlBackend()
	db := b.open(t)
	s := newStore(t, b, db, sqlseq.Options{})
	g1, g2 := s.Gapless(), s.Gapless()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	n1, err := g1.Next(sqlseq.WithTx(ctx, tx), "fiscal-2025")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	n2, err := g2.Next(sqlseq.WithTx(ctx, tx), "fiscal-2025")
	if err != nil {
		t.Errorf("second draw of the key in the same transaction, through another Gapless: %v after %v (got %d first)", err, time.Since(start).Round(time.Millisecond), n1)
		return
	}
	if n2 != n1+1 {
		t.Errorf("got %d then %d", n1, n2)
	}
}

// Under REPEATABLE READ (or SERIALIZABLE) on PostgreSQL, a caller that
// queued on the row fails with a serialization failure (40001) as soon as
// the holder commits. That is PostgreSQL's rule, now documented (Gapless):
// the error wraps ErrUnavailable and the transaction is retried as a
// whole; at READ COMMITTED the queued caller gets the next number.
func TestAdversaryGaplessRepeatableReadQueuedCallerFails(t *testing.T) {
	b := postgresBackend()
	db := b.open(t)
	g := newStore(t, b, db, sqlseq.Options{}).Gapless()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	opts := &sql.TxOptions{Isolation: sql.LevelRepeatableRead}
	// the row exists
	tx0, _ := db.BeginTx(ctx, opts)
	if _, err := g.Next(sqlseq.WithTx(ctx, tx0), "inv"); err != nil {
		t.Fatal(err)
	}
	tx0.Commit()

	t1, _ := db.BeginTx(ctx, opts)
	t2, _ := db.BeginTx(ctx, opts)
	defer t2.Rollback()
	if _, err := t2.ExecContext(ctx, "SELECT 1"); err != nil { // snapshot taken
		t.Fatal(err)
	}
	if _, err := g.Next(sqlseq.WithTx(ctx, t1), "inv"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := g.Next(sqlseq.WithTx(ctx, t2), "inv")
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if err := t1.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, sequence.ErrUnavailable) {
		t.Errorf("a caller queued on the key's row under REPEATABLE READ: %v; want a serialization failure wrapping ErrUnavailable", err)
	}

	// At READ COMMITTED the queued caller waits and draws the next number.
	rc := &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	t3, _ := db.BeginTx(ctx, rc)
	t4, _ := db.BeginTx(ctx, rc)
	defer t4.Rollback()
	first, err := g.Next(sqlseq.WithTx(ctx, t3), "inv")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_, err := g.Next(sqlseq.WithTx(ctx, t4), "inv")
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if err := t3.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("a caller queued at READ COMMITTED after %d: %v", first, err)
	}
}

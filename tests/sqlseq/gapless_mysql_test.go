package sqlseq_test

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

// T1 draws key B, which fixes its REPEATABLE READ snapshot; T2 then draws
// key A, new, and holds its row; T1 draws A and T2 draws B. The waits form
// a cycle that InnoDB must see and break at once (a deadlock error), not a
// wait that only the callers' contexts end. (T1's snapshot predates A's
// row: a read in T1 would miss it and make it again, on another
// connection, waiting on T2 where InnoDB cannot see.)
func TestGaplessMySQLStaleSnapshot(t *testing.T) {
	b := mysqlBackend()
	db := b.open(t)
	g := newStore(t, b, db, sqlseq.Options{}).Gapless()
	ctx := context.Background()
	tx0, _ := db.BeginTx(ctx, nil)
	if _, err := g.Next(sqlseq.WithTx(ctx, tx0), "B"); err != nil {
		t.Fatal(err)
	}
	tx0.Commit()

	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	t1, _ := db.BeginTx(ctx, nil)
	defer t1.Rollback()
	if _, err := g.Next(sqlseq.WithTx(ctx, t1), "B"); err != nil {
		t.Fatal(err)
	}
	// Another Gapless (another process, in effect) makes A.
	t2, _ := db.BeginTx(ctx, nil)
	defer t2.Rollback()
	if _, err := newStore(t, b, db, sqlseq.Options{}).Gapless().Next(sqlseq.WithTx(ctx, t2), "A"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { _, errs[0] = g.Next(sqlseq.WithTx(ctx, t1), "A") })
	wg.Go(func() {
		time.Sleep(300 * time.Millisecond)
		_, errs[1] = g.Next(sqlseq.WithTx(ctx, t2), "B")
	})
	wg.Wait()
	if took := time.Since(start); took > 5*time.Second || errs[0] == nil && errs[1] == nil || errors.Is(errs[0], context.DeadlineExceeded) || errors.Is(errs[1], context.DeadlineExceeded) {
		t.Errorf("after %v: T1 draws A: %v; T2 draws B: %v; want a deadlock reported at once", took, errs[0], errs[1])
	}
}

// At SERIALIZABLE, a new key is drawn, and concurrent callers on an
// existing key queue on its row without deadlocks (no read in the
// transaction takes a shared lock before the UPDATE's exclusive one).
func TestGaplessMySQLSerializable(t *testing.T) {
	b := mysqlBackend()
	db := b.open(t)
	g := newStore(t, b, db, sqlseq.Options{}).Gapless()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	serializable := &sql.TxOptions{Isolation: sql.LevelSerializable}
	tx, err := db.BeginTx(ctx, serializable)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := g.Next(sqlseq.WithTx(ctx, tx), "new"); err != nil || n != 1 {
		t.Fatalf("SERIALIZABLE, a new key: %d, %v", n, err)
	}
	tx.Commit()
	var mu sync.Mutex
	var got []int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 5 {
				tx, err := db.BeginTx(ctx, serializable)
				if err != nil {
					t.Error(err)
					return
				}
				n, err := g.Next(sqlseq.WithTx(ctx, tx), "new")
				if err != nil {
					tx.Rollback()
					t.Errorf("SERIALIZABLE, 16 callers: %v", err)
					return
				}
				if err := tx.Commit(); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got = append(got, n)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(got) != 80 {
		t.Fatalf("%d of 80 committed", len(got))
	}
	seen := map[int64]bool{}
	for _, n := range got {
		if seen[n] || n < 2 || n > 81 {
			t.Fatalf("committed numbers %v; want 2..81 once each", got)
		}
		seen[n] = true
	}
}

// A pool of one connection, held by the transaction, cannot make a new
// key's row: a clear error at once, not a wait until the context ends.
// An existing key needs no other connection.
func TestGaplessMySQLPoolOfOne(t *testing.T) {
	b := mysqlBackend()
	db := b.open(t)
	s := newStore(t, b, db, sqlseq.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tx, _ := db.BeginTx(ctx, nil)
	if _, err := s.Gapless().Next(sqlseq.WithTx(ctx, tx), "old"); err != nil {
		t.Fatal(err)
	}
	tx.Commit()
	db.SetMaxOpenConns(1)
	g := s.Gapless()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	start := time.Now()
	_, err = g.Next(sqlseq.WithTx(ctx, tx), "INV-2026")
	if !errors.Is(err, sequence.ErrInvalidArgument) || time.Since(start) > time.Second {
		t.Errorf("pool of one, a new key: %v after %v; want an error wrapping ErrInvalidArgument at once", err, time.Since(start))
	}
}

// A transaction of another database is an error that says so, not
// "exhausted".
func TestGaplessMySQLOtherDatabase(t *testing.T) {
	b := mysqlBackend()
	db := b.open(t)
	g := newStore(t, b, db, sqlseq.Options{}).Gapless()
	other := b.open(t)
	newStore(t, b, other, sqlseq.Options{})
	ctx := context.Background()
	tx, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	_, err = g.Next(sqlseq.WithTx(ctx, tx), "k")
	if !errors.Is(err, sequence.ErrInvalidArgument) || errors.Is(err, sequence.ErrExhausted) {
		t.Errorf("a transaction of another database: %v; want an error wrapping ErrInvalidArgument", err)
	}
}

package sqlseq_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/sqlseq"
)

func TestJournal(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			sequencetest.RunJournal(t, newStore(t, b, b.open(t), sqlseq.Options{}))
		})
	}
}

// TestJournalTampered: a row of the journal table edited, deleted or
// inserted by hand is found by VerifyChain, at its record; the control is
// the untouched journal, which verifies.
func TestJournalTampered(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := newStore(t, b, db, sqlseq.Options{})
			for range 5 {
				if _, err := s.Allocate(ctx, "inv", 10); err != nil {
					t.Fatal(err)
				}
			}
			q := func(stmt string) string {
				if b.dialect == sqlseq.Postgres {
					for i := 1; strings.Contains(stmt, "?"); i++ {
						stmt = strings.Replace(stmt, "?", "$"+string(rune('0'+i)), 1)
					}
				}
				return stmt
			}
			// The journal's rows in the table of records, edited by hand
			// with SQL.
			get := func(seq int64) []byte {
				t.Helper()
				var v []byte
				if err := db.QueryRowContext(ctx, q(`SELECT v FROM sn_ledger_kv WHERE k = ?`), []byte(journal.Key("inv", seq))).Scan(&v); err != nil {
					t.Fatalf("record %d: %v", seq, err)
				}
				return v
			}
			exec := func(stmt string, args ...any) {
				t.Helper()
				if _, err := db.ExecContext(ctx, q(stmt), args...); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			set := func(seq int64, v []byte) {
				t.Helper()
				exec(`DELETE FROM sn_ledger_kv WHERE k = ?`, []byte(journal.Key("inv", seq)))
				exec(`INSERT INTO sn_ledger_kv (k, v, ver) VALUES (?, ?, ?)`, []byte(journal.Key("inv", seq)), v, seq*1000+7)
			}
			del := func(seq int64) { exec(`DELETE FROM sn_ledger_kv WHERE k = ?`, []byte(journal.Key("inv", seq))) }
			edit := func(v []byte, from, to string) []byte {
				t.Helper()
				if !strings.Contains(string(v), from) {
					t.Fatalf("%s holds no %s", v, from)
				}
				return []byte(strings.Replace(string(v), from, to, 1))
			}
			verify := func() error {
				events, head, err := journal.ReadJournal(ctx, s, "inv")
				if err != nil {
					t.Fatal(err)
				}
				return journal.VerifyChain("inv", events, head)
			}
			expect := func(what string, seq int64, word string) {
				t.Helper()
				err := verify()
				var ce *journal.ChainError
				if !errors.As(err, &ce) || ce.Seq != seq || !strings.Contains(err.Error(), word) {
					t.Errorf("%s: %v, want record %d %s", what, err, seq, word)
					return
				}
				t.Logf("%s: %v", what, err)
			}
			if err := verify(); err != nil {
				t.Fatalf("the control, untouched: %v", err)
			}
			// Edited: record 3 made to reserve fewer numbers.
			r3 := get(3)
			set(3, edit(r3, `"last":30`, `"last":25`))
			expect("edited", 3, "altered")
			set(3, r3)
			if err := verify(); err != nil {
				t.Fatalf("edited back: %v", err)
			}
			// Deleted: record 2 gone.
			saved := get(2)
			del(2)
			expect("deleted", 2, "deleted")
			set(2, saved)
			// Inserted: a forged record after the last, the head left.
			set(6, edit(saved, `"last":20`, `"last":70`))
			expect("inserted", 6, "inserted")
			del(6)
			// Inserted in the middle, the rest renumbered.
			rest := [][]byte{get(3), get(4), get(5)}
			for i, v := range rest {
				set(int64(4+i), v)
			}
			set(3, edit(saved, `"by":"`, `"by":"forger `))
			expect("inserted and renumbered", 3, "altered")
		})
	}
}

// TestGaplessHold: a hold commits or voids; one past its deadline is
// lapsed, and the audit fails until it is committed; a draw in a
// transaction is journaled with it, and a rollback leaves no record.
func TestGaplessHold(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := newStore(t, b, db, sqlseq.Options{})
			g := s.Gapless()
			audit := func() *journal.Report {
				t.Helper()
				events, head, err := journal.ReadJournal(ctx, s, "inv")
				if err != nil {
					t.Fatal(err)
				}
				if err := journal.VerifyChain("inv", events, head); err != nil {
					t.Fatal(err)
				}
				return journal.Audit("inv", events, head, time.Now())
			}
			h1, err := g.Hold(ctx, "inv", time.Hour)
			if err != nil || h1.N != 1 {
				t.Fatalf("Hold: %v %v", h1, err)
			}
			if err := g.Commit(ctx, "inv", 1); err != nil {
				t.Fatal(err)
			}
			if err := g.Commit(ctx, "inv", 1); !errors.Is(err, sqlseq.ErrNotHeld) {
				t.Errorf("a second Commit: %v, want ErrNotHeld", err)
			}
			h2, _ := g.Hold(ctx, "inv", time.Hour)
			if err := g.Void(ctx, "inv", h2.N, "draft abandoned"); err != nil {
				t.Fatal(err)
			}
			if err := g.Commit(ctx, "inv", h2.N); !errors.Is(err, sqlseq.ErrNotHeld) {
				t.Errorf("Commit of a voided hold: %v, want ErrNotHeld", err)
			}
			// In the caller's transaction: one committed, one rolled back.
			for _, commit := range []bool{true, false} {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := g.Next(sqlseq.WithTx(ctx, tx), "inv"); err != nil {
					t.Fatal(err)
				}
				if commit {
					err = tx.Commit()
				} else {
					err = tx.Rollback()
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			pending, _ := g.Hold(ctx, "inv", time.Hour)
			if r := audit(); !r.Explained() || states(r)[journal.Pending] != 1 {
				t.Errorf("a hold before its deadline: %v %v", r.Spans, r.Problems)
			}
			g.Commit(ctx, "inv", pending.N)
			lapsed, _ := g.Hold(ctx, "inv", time.Millisecond)
			time.Sleep(5 * time.Millisecond)
			r := audit()
			if r.Explained() || states(r)[journal.Lapsed] != 1 {
				t.Errorf("a hold past its deadline: explained %v, %v", r.Explained(), r.Spans)
			}
			if err := g.Commit(ctx, "inv", lapsed.N); err != nil {
				t.Fatalf("a late Commit: %v", err)
			}
			r = audit()
			want := map[journal.State]int64{journal.Issued: 4, journal.Void: 1}
			if !r.Explained() || len(states(r)) != 2 || states(r)[journal.Issued] != 4 || states(r)[journal.Void] != 1 {
				t.Errorf("at the end: %v, want %v; %v", states(r), want, r.Problems)
			}
		})
	}
}

// TestGaplessHoldConcurrent: many holders at once, each committing or
// voiding: the numbers are 1..n, none twice, all explained.
func TestGaplessHoldConcurrent(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s := newStore(t, b, b.open(t), sqlseq.Options{})
			g := s.Gapless()
			var mu sync.Mutex
			seen := map[int64]bool{}
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					for i := range 10 {
						h, err := g.Hold(ctx, "inv", time.Hour)
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						if seen[h.N] {
							t.Errorf("%d held twice", h.N)
						}
						seen[h.N] = true
						mu.Unlock()
						if (w+i)%5 == 0 {
							err = g.Void(ctx, "inv", h.N, "abandoned")
						} else {
							err = g.Commit(ctx, "inv", h.N)
						}
						if err != nil {
							t.Error(err)
						}
					}
				})
			}
			wg.Wait()
			events, head, err := journal.ReadJournal(ctx, s, "inv")
			if err != nil {
				t.Fatal(err)
			}
			if err := journal.VerifyChain("inv", events, head); err != nil {
				t.Fatal(err)
			}
			r := journal.Audit("inv", events, head, time.Now())
			st := states(r)
			if !r.Explained() || head.Mark != 80 || st[journal.Issued]+st[journal.Void] != 80 || st[journal.Void] != 16 {
				t.Errorf("mark %d, %v, %v", head.Mark, st, r.Problems)
			}
		})
	}
}

func states(r *journal.Report) map[journal.State]int64 {
	m := map[journal.State]int64{}
	for _, s := range r.Spans {
		m[s.State] += s.Range.Len()
	}
	return m
}

func TestReplayer(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			sequencetest.RunReplayer(t, claim.Of(newStore(t, b, b.open(t), sqlseq.Options{})))
		})
	}
}

// TestProfileOverGapless: sqlseq's Gapless meets the gapless and
// fr-continuous profiles; numbers drawn in transactions and voided
// through sn are all explained; a Segment over the same ledger does not
// meet them.
func TestProfileOverGapless(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := newStore(t, b, db, sqlseq.Options{})
			g, err := sn.New("FA-@<seq, width=6>", sn.WithSequence("seq", s.Gapless()), sn.WithProfile("fr-continuous"))
			if err != nil {
				t.Fatal(err)
			}
			for i := range 4 {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := g.Next(sqlseq.WithTx(ctx, tx)); err != nil {
					t.Fatal(err)
				}
				if i == 2 {
					tx.Rollback()
				} else if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
			}
			if err := g.Void(sn.WithActor(ctx, "alice"), "FA-000002", "cancelled, credit note FA-000004"); err != nil {
				t.Fatal(err)
			}
			key, _ := g.Key(sn.Request{})
			events, head, err := journal.ReadJournal(ctx, s, key)
			if err != nil {
				t.Fatal(err)
			}
			r := journal.Audit(key, events, head, time.Now())
			if st := states(r); !r.Explained() || st[journal.Issued] != 2 || st[journal.Void] != 1 || head.Mark != 3 {
				t.Errorf("mark %d, %v, %v", head.Mark, st, r.Problems)
			}
			seg, _ := sequence.NewSegment(s, sequence.SegmentOptions{})
			defer seg.Close()
			if _, err := sn.New("FB-@<seq, width=6>", sn.WithSequence("seq", seg), sn.WithProfile("gapless")); !errors.Is(err, sn.ErrProfile) {
				t.Errorf("gapless over a Segment: %v, want ErrProfile", err)
			}
		})
	}
}

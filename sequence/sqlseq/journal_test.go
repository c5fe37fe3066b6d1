package sqlseq_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"

	"github.com/sngen/sn/sequence"
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
			id := sha256.Sum256([]byte("inv"))
			q := func(stmt string) string {
				if b.dialect == sqlseq.Postgres {
					for i := 1; strings.Contains(stmt, "?"); i++ {
						stmt = strings.Replace(stmt, "?", "$"+string(rune('0'+i)), 1)
					}
				}
				return stmt
			}
			exec := func(stmt string, args ...any) {
				t.Helper()
				if _, err := db.ExecContext(ctx, q(stmt), args...); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			verify := func() error {
				events, head, err := sequence.ReadJournal(ctx, s, "inv")
				if err != nil {
					t.Fatal(err)
				}
				return sequence.VerifyChain("inv", events, head)
			}
			expect := func(what string, seq int64, word string) {
				t.Helper()
				err := verify()
				var ce *sequence.ChainError
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
			exec(`UPDATE sn_ledger_journal SET last_n = last_n - 5 WHERE id = ? AND seq = 3`, id[:])
			expect("edited", 3, "altered")
			exec(`UPDATE sn_ledger_journal SET last_n = last_n + 5 WHERE id = ? AND seq = 3`, id[:])
			if err := verify(); err != nil {
				t.Fatalf("edited back: %v", err)
			}
			// Deleted: record 2 gone.
			exec(`CREATE TABLE saved AS SELECT * FROM sn_ledger_journal WHERE id = ? AND seq = 2`, id[:])
			exec(`DELETE FROM sn_ledger_journal WHERE id = ? AND seq = 2`, id[:])
			expect("deleted", 2, "deleted")
			exec(`INSERT INTO sn_ledger_journal SELECT * FROM saved`)
			// Inserted: a forged record after the last, the head left.
			exec(`INSERT INTO sn_ledger_journal SELECT id, 6, kind, first_n + 50, last_n + 50, at_us, by_name, actor, reason, deadline_us, hash FROM saved`)
			expect("inserted", 6, "inserted")
			exec(`DELETE FROM sn_ledger_journal WHERE id = ? AND seq = 6`, id[:])
			// Inserted in the middle, the rest renumbered.
			exec(`UPDATE sn_ledger_journal SET seq = seq + 10 WHERE id = ? AND seq >= 3`, id[:])
			exec(`UPDATE sn_ledger_journal SET seq = seq - 9 WHERE id = ? AND seq >= 13`, id[:])
			exec(`INSERT INTO sn_ledger_journal SELECT id, 3, kind, first_n, last_n, at_us, by_name, 'forger', reason, deadline_us, hash FROM saved`)
			expect("inserted and renumbered", 3, "altered")
		})
	}
}

package sqlseq_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sqlseq"
)

func advQ(b backend, stmt string) string {
	if b.dialect == sqlseq.Postgres {
		for i := 1; strings.Contains(stmt, "?"); i++ {
			stmt = strings.Replace(stmt, "?", fmt.Sprintf("$%d", i), 1)
		}
	}
	return stmt
}

func advAudit(t *testing.T, s *sqlseq.Store, key string) (*sequence.Report, error, []sequence.Event) {
	t.Helper()
	events, head, err := sequence.ReadJournal(context.Background(), s, key)
	if err != nil {
		t.Fatal(err)
	}
	return sequence.Audit(key, events, head, time.Now()), sequence.VerifyChain(key, events, head), events
}

// TestAdvCounterRolledBack: the ledger row lowered by hand (a restore of
// the ledger table alone, an UPDATE): the next Allocate hands out numbers
// issued before, and the journal, which saw it (a Restarted record),
// verifies and explains every number. sn gaps would exit 0.
func TestAdvCounterRolledBack(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := newStore(t, b, db, sqlseq.Options{})
			r1, err := s.Allocate(sequence.WithDrawn(ctx, true), "inv", 10)
			if err != nil {
				t.Fatal(err)
			}
			id := sha256.Sum256([]byte("inv"))
			if _, err := db.ExecContext(ctx, advQ(b, `UPDATE sn_ledger SET last = 3 WHERE id = ?`), id[:]); err != nil {
				t.Fatal(err)
			}
			r2, err := s.Allocate(sequence.WithDrawn(ctx, true), "inv", 10)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("drawn %v, then %v: %v issued twice", r1, r2, sequence.Range{First: r2.First, Last: r1.Last})
			rep, verr, events := advAudit(t, s, "inv")
			for _, e := range events {
				t.Logf("%v", e)
			}
			t.Logf("verify: %v; spans %v; problems %v", verr, rep.Spans, rep.Problems)
			if r2.First <= r1.Last && verr == nil && rep.Explained() {
				t.Errorf("numbers %d to %d were issued twice, and the journal verifies and explains every number", r2.First, r1.Last)
			}
		})
	}
}

// TestAdvForgedPrune: records deleted from the start of a journal and
// replaced by a hand-made Pruned record (its Range, Reason, At and By are
// not in any hash) verify; a lapsed hold the records showed is gone.
func TestAdvForgedPrune(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := newStore(t, b, db, sqlseq.Options{})
			g := s.Gapless()
			if _, err := g.Hold(ctx, "inv", time.Millisecond); err != nil { // 1: lapses, never committed
				t.Fatal(err)
			}
			for range 3 {
				h, err := g.Hold(ctx, "inv", time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				if err := g.Commit(ctx, "inv", h.N); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(5 * time.Millisecond)
			rep, verr, events := advAudit(t, s, "inv")
			if verr != nil || rep.Explained() {
				t.Fatalf("control: verify %v, explained %v (want a lapsed hold)", verr, rep.Explained())
			}
			// The forger: delete records 1..2 and put a Pruned record with
			// the hash of record 2 in their place.
			id := sha256.Sum256([]byte("inv"))
			two := events[1]
			exec := func(stmt string, args ...any) {
				t.Helper()
				if _, err := db.ExecContext(ctx, advQ(b, stmt), args...); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			exec(`DELETE FROM sn_ledger_journal WHERE id = ? AND seq <= 2`, id[:])
			exec(`INSERT INTO sn_ledger_journal (id, seq, kind, first_n, last_n, at_us, by_name, actor, reason, deadline_us, hash) VALUES (?, 2, 'pruned', 1, 2, ?, 'sn prune', '', 'records 1 to 2 pruned: 2 issued', 0, ?)`,
				id[:], time.Now().UnixMicro(), two.Hash[:])
			rep, verr, _ = advAudit(t, s, "inv")
			t.Logf("after the forgery: verify %v, explained %v, spans %v", verr, rep.Explained(), rep.Spans)
			if verr == nil && rep.Explained() {
				t.Errorf("records deleted and a Pruned record forged: the journal verifies and explains everything (the lapsed hold 1 is gone)")
			}
		})
	}
}

// TestAdvPruneLaundersLapsed: sn prune (Prune through the head) of a
// journal that Audit finds unexplained (a lapsed hold nobody committed or
// voided) succeeds, and the journal then verifies and is explained.
func TestAdvPruneLaundersLapsed(t *testing.T) {
	ctx := context.Background()
	b := postgresBackend()
	s := newStore(t, b, b.open(t), sqlseq.Options{})
	g := s.Gapless()
	if _, err := g.Hold(ctx, "inv", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	rep, verr, _ := advAudit(t, s, "inv")
	if verr != nil || rep.Explained() {
		t.Fatalf("control: %v %v", verr, rep.Explained())
	}
	head, _ := s.Head(ctx, "inv")
	if _, err := s.Prune(ctx, "inv", head.Seq); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("Prune of a journal with a lapsed hold: %v, want it refused", err)
	}
	rep, verr, _ = advAudit(t, s, "inv")
	if verr != nil || rep.Explained() {
		t.Errorf("after the refused Prune: verify %v, explained %v; want the lapsed hold still there", verr, rep.Explained())
	}
}

package sqlseq_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sngen/sn/internal/guardtest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
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

func advAudit(t *testing.T, s *sqlseq.Store, key string) (*journal.Report, error, []journal.Event) {
	t.Helper()
	events, head, err := journal.ReadJournal(context.Background(), s, key)
	if err != nil {
		t.Fatal(err)
	}
	return journal.Audit(key, events, head, time.Now()), journal.VerifyChain(key, events, head), events
}

// TestAdvCounterRolledBack: the ledger row lowered by hand (a restore of
// the ledger table alone, an UPDATE) or deleted (by hand, or by its
// period's expiry) is refused: the next Allocate fails with
// journal.ErrBehind, naming the journal's mark, and hands out nothing; a
// Floor to that mark repairs it, and the key goes on above it. No number
// is issued twice. The control, the row deleted with its journal (a store
// that keeps none), starts again at 1.
func TestAdvCounterRolledBack(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := newStore(t, b, db, sqlseq.Options{})
			for _, key := range []string{"lowered", "deleted", "control"} {
				r1, err := s.Allocate(journal.WithDrawn(ctx, true), key, 10)
				if err != nil {
					t.Fatal(err)
				}
				id := sha256.Sum256([]byte(key))
				stmt, want := `UPDATE sn_ledger SET last = 3 WHERE id = ?`, "below 10"
				if key != "lowered" {
					stmt, want = `DELETE FROM sn_ledger WHERE id = ?`, "is gone"
				}
				if _, err := db.ExecContext(ctx, advQ(b, stmt), id[:]); err != nil {
					t.Fatal(err)
				}
				if key == "control" {
					guardtest.Forget(t, s.Records(), key)
				}
				r2, err := s.Allocate(journal.WithDrawn(ctx, true), key, 10)
				if key == "control" {
					if err != nil || r2.First > r1.Last {
						t.Errorf("control: %v, %v after %v; want the numbers again", r2, err, r1)
					}
					continue
				}
				if !errors.Is(err, journal.ErrBehind) || !strings.Contains(err.Error(), want) {
					t.Fatalf("an Allocate on a row %s below the journal's 10: %v, %v; want ErrBehind saying %q", key, r2, err, want)
				}
				if err := s.Floor(ctx, key, r1.Last); err != nil {
					t.Fatalf("Floor to the journal's mark: %v", err)
				}
				if r3, err := s.Allocate(journal.WithDrawn(ctx, true), key, 10); err != nil || r3.First <= r1.Last {
					t.Errorf("after the Floor: %v, %v; want above %d", r3, err, r1.Last)
				}
				rep, verr, _ := advAudit(t, s, key)
				if verr != nil {
					t.Errorf("the journal does not verify: %v", verr)
				}
				if len(rep.Problems) > 0 || !rep.Explained() {
					t.Errorf("audit after the repair: %v; problems %v; want every number explained, none twice", rep.Spans, rep.Problems)
				}
			}
		})
	}
}

// TestAdvForgedPrune: an intruder who can write the journal's table,
// and has sn's PruneRecord and a key of their own, deletes the first
// records of an open period (a void among them) and writes a pruned
// record in their place. The forged journal no longer shows the void
// (the control: the forgery works if it is believed), and it does not
// verify against the auditor's key and latest anchor, nor does a record
// sealed the way an earlier release did. A real prune through the
// Store verifies, and an anchor taken before it, at a record it
// replaced, still does.
func TestAdvForgedPrune(t *testing.T) {
	ctx := context.Background()
	pub, sk, _ := ed25519.GenerateKey(nil)
	_, intruder, _ := ed25519.GenerateKey(nil)
	trusted := []ed25519.PublicKey{pub}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := newStore(t, b, db, sqlseq.Options{})
			for range 3 {
				if _, err := s.Allocate(journal.WithDrawn(ctx, true), "inv", 10); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Note(ctx, "inv", journal.Event{Kind: journal.Voided, Range: sequence.Range{First: 12, Last: 12}, Reason: "cancelled"}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Allocate(journal.WithDrawn(ctx, true), "inv", 10); err != nil {
				t.Fatal(err)
			}
			events, head, err := journal.ReadJournal(ctx, s, "inv")
			if err != nil {
				t.Fatal(err)
			}
			latest := head
			early := journal.Head{Seq: 2, Hash: events[1].Hash}
			exec := func(stmt string, args ...any) {
				t.Helper()
				if _, err := db.ExecContext(ctx, advQ(b, stmt), args...); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			// The journal's rows in the table of records, written by
			// hand with SQL.
			put := func(e journal.Event) {
				t.Helper()
				exec(`INSERT INTO sn_ledger_kv (k, v, ver) VALUES (?, ?, ?)`, []byte(journal.Key("inv", e.Seq)), journal.MarshalEvent(e), 7000+e.Seq)
			}
			deleteThrough := func(seq int64) {
				t.Helper()
				exec(`DELETE FROM sn_ledger_kv WHERE k >= ? AND k <= ?`, []byte(journal.Key("inv", 0)), []byte(journal.Key("inv", seq)))
			}
			forge := func(p journal.Event) {
				t.Helper()
				deleteThrough(p.Seq)
				put(p)
			}
			// Records 1 to 4 (the void is 4), summed up without the void.
			withoutVoid := append(append([]journal.Event(nil), events[:3]...), journal.Event{Seq: 4, Kind: journal.Drawn, Range: sequence.Range{First: 31, Last: 31}, Hash: events[3].Hash})
			forged, err := journal.PruneRecord("inv", withoutVoid, time.Now(), intruder)
			if err != nil {
				t.Fatal(err)
			}
			forge(forged)
			after, head, err := journal.ReadJournal(ctx, s, "inv")
			if err != nil {
				t.Fatal(err)
			}
			if rep := journal.Audit("inv", after, head, time.Now()); countVoid(rep) != 0 {
				t.Fatalf("control: the forged journal still shows the void: %v", rep.Spans)
			}
			if err := journal.VerifySealed("inv", after, head, trusted, latest); err == nil {
				t.Errorf("a prune forged over an open period (the void erased) verifies against the auditor's key and latest anchor")
			} else {
				t.Logf("forged with another key: %v", err)
			}
			legacy := forged
			legacy.Reason = "records 1 to 4 pruned: 31 issued; seal " + strings.Repeat("0", 64)
			forge(legacy)
			after, head, _ = journal.ReadJournal(ctx, s, "inv")
			if err := journal.VerifySealed("inv", after, head, trusted, latest); err == nil {
				t.Errorf("a prune sealed by a bare hash verifies")
			}

			// Restore the records, then prune for real.
			deleteThrough(4)
			for _, e := range events[:4] {
				put(e)
			}
			events, head, _ = journal.ReadJournal(ctx, s, "inv")
			if err := journal.VerifySealed("inv", events, head, trusted, latest, early); err != nil {
				t.Fatalf("restored: %v", err)
			}
			p, err := journal.PruneRecord("inv", events[:4], time.Now(), sk)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Prune(ctx, "inv", p); err != nil {
				t.Fatal(err)
			}
			events, head, _ = journal.ReadJournal(ctx, s, "inv")
			if err := journal.VerifySealed("inv", events, head, trusted, latest, early); err != nil {
				t.Errorf("after a real prune, with anchors taken before: %v", err)
			}
			if rep := journal.Audit("inv", events, head, time.Now()); !rep.Explained() {
				t.Errorf("after a real prune: %v", rep.Problems)
			}
			if !strings.Contains(journal.PruneSummary(events[0]), "1 void") {
				t.Errorf("the prune's summary does not count the void: %q", journal.PruneSummary(events[0]))
			}
		})
	}
}

// countVoid counts the void numbers rep finds.
func countVoid(rep *journal.Report) int64 {
	var n int64
	for _, sp := range rep.Spans {
		if sp.State == journal.Void {
			n += sp.Range.Len()
		}
	}
	return n
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
	events, _, _ := journal.ReadJournal(ctx, s, "inv")
	_, sk, _ := ed25519.GenerateKey(nil)
	if _, err := journal.PruneRecord("inv", events, time.Now(), sk); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("PruneRecord of a journal with a lapsed hold: %v, want it refused", err)
	}
	rep, verr, _ = advAudit(t, s, "inv")
	if verr != nil || rep.Explained() {
		t.Errorf("after the refused Prune: verify %v, explained %v; want the lapsed hold still there", verr, rep.Explained())
	}
}

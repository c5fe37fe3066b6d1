package sqlseq_test

import (
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/sqlseq"
)

// TestMigrateLongClaim: claims the previous release answered, in
// sn_ledger_idem keyed by SHA-256(id). A short id (control) and one longer
// than a record key was (600 bytes; ids go up to 1,279): each is found
// by a retry after the upgrade (found by adversary run 3: the long one
// was hashed into its record's key, and never migrated).
func TestMigrateLongClaim(t *testing.T) {
	ctx := t.Context()
	b := postgresBackend()
	db := b.open(t)
	if _, err := db.ExecContext(ctx, release36dc60d[sqlseq.Postgres][6]); err != nil {
		t.Fatal(err)
	}
	ids := []string{"series\x00order-1", strings.Repeat("L", 600) + "\x00order-1"}
	for _, id := range ids {
		h := sha256.Sum256([]byte(id))
		if _, err := db.ExecContext(ctx, `INSERT INTO sn_ledger_idem VALUES ($1, 'digest-1', 'tok', '["SN-000042"]', $2, 1)`, h[:], time.Now().AddDate(50, 0, 0).UnixMicro()); err != nil {
			t.Fatal(err)
		}
	}
	s, err := sqlseq.New(db, b.dialect, sqlseq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for i, id := range ids {
		c, err := claim.Of(s).Claim(ctx, id, "digest-1", "retry", time.Minute)
		t.Logf("id #%d (%d bytes): %+v %v", i, len(id), c, err)
		if err != nil || c.Mine || c.Answer != `["SN-000042"]` {
			lost++
			t.Errorf("id #%d answered by the previous release: a retry gets %+v, %v; want the answer", i, c, err)
		}
	}
	var left int
	db.QueryRowContext(ctx, `SELECT count(*) FROM sn_ledger_idem`).Scan(&left)
	t.Logf("answers lost: %d of %d (id 0 is the control); rows left in sn_ledger_idem: %d", lost, len(ids), left)
}

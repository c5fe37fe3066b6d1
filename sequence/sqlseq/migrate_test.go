package sqlseq_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"database/sql"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/sqlseq"
)

// release36dc60d is the catalog's table as the release on main before
// the records (commit 36dc60d) made it, with two entries in it as that
// release wrote them.
var release36dc60d = map[sqlseq.Dialect][]string{
	sqlseq.Postgres: {`CREATE TABLE sn_ledger_catalog (
	id text PRIMARY KEY,
	name text NOT NULL,
	spec text NOT NULL,
	first_us bigint NOT NULL,
	first_by text NOT NULL
)`,
		`INSERT INTO sn_ledger_catalog VALUES ('0123456789abcdef', 'orders', '{"fixture":"orders"}', 1764000000000000, 'fixture')`,
		`INSERT INTO sn_ledger_catalog VALUES ('fedcba9876543210', 'invoices', '{"fixture":"invoices"}', 1764000000000001, 'fixture')`,
		`CREATE TABLE sn_ledger_records (
	name bytea PRIMARY KEY,
	value bytea NOT NULL
)`,
		`INSERT INTO sn_ledger_records VALUES ('sn catalog lock', 'the row whose lock serialises enrollments in the catalog')`,
		`INSERT INTO sn_ledger_records VALUES ('sn obfuscate k', 'check-1')`,
		`CREATE TABLE sn_ledger_idem (
	id bytea PRIMARY KEY CHECK (octet_length(id) = 32),
	digest text NOT NULL,
	token text NOT NULL,
	answer text NOT NULL,
	until_us bigint NOT NULL,
	done smallint NOT NULL
)`},
	sqlseq.MySQL: {"CREATE TABLE `sn_ledger_catalog` (" + `
	id VARCHAR(64) NOT NULL PRIMARY KEY,
	name VARCHAR(255) NOT NULL,
	spec MEDIUMTEXT NOT NULL,
	first_us BIGINT NOT NULL,
	first_by VARCHAR(255) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
		`INSERT INTO sn_ledger_catalog VALUES ('0123456789abcdef', 'orders', '{"fixture":"orders"}', 1764000000000000, 'fixture')`,
		`INSERT INTO sn_ledger_catalog VALUES ('fedcba9876543210', 'invoices', '{"fixture":"invoices"}', 1764000000000001, 'fixture')`,
		"CREATE TABLE `sn_ledger_records` (" + `
	name VARBINARY(255) NOT NULL PRIMARY KEY,
	value VARBINARY(4096) NOT NULL
) ENGINE=InnoDB`,
		`INSERT INTO sn_ledger_records VALUES ('sn catalog lock', 'the row whose lock serialises enrollments in the catalog')`,
		`INSERT INTO sn_ledger_records VALUES ('sn obfuscate k', 'check-1')`,
		"CREATE TABLE `sn_ledger_idem` (" + `
	id BINARY(32) NOT NULL PRIMARY KEY,
	digest VARCHAR(128) NOT NULL,
	token VARCHAR(128) NOT NULL,
	answer MEDIUMTEXT NOT NULL,
	until_us BIGINT NOT NULL,
	done SMALLINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`},
}

// TestMigrateCatalog opens a ledger whose catalog, named records and
// claims the release before the records kept in tables of their own (a
// retry of a key it answered gets its answer): the first use of the records, by two
// Stores at once, moves both entries into them, keeping when and by whom
// they were enrolled, and empties the table; a Forget afterwards is not
// undone by another Migrate.
func TestMigrateCatalog(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := b.open(t)
			for _, q := range release36dc60d[b.dialect] {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			// Two claims the release recorded: one answered, kept for
			// years, and one whose time has passed.
			for _, c := range []struct {
				id    string
				until int64
			}{{"series\x00order-1", time.Now().AddDate(50, 0, 0).UnixMicro()}, {"series\x00order-0", 1}} {
				h := sha256.Sum256([]byte(c.id))
				q := `INSERT INTO sn_ledger_idem VALUES ($1, 'digest-1', 'tok', '["SN-000042"]', $2, 1)`
				if b.dialect == sqlseq.MySQL {
					q = strings.ReplaceAll(strings.ReplaceAll(q, "$1", "?"), "$2", "?")
				}
				if _, err := db.ExecContext(ctx, q, h[:], c.until); err != nil {
					t.Fatal(err)
				}
			}
			s1, _ := sqlseq.New(db, b.dialect, sqlseq.Options{})
			s2, _ := sqlseq.New(db, b.dialect, sqlseq.Options{})
			errs := make(chan error, 2)
			for _, s := range []*sqlseq.Store{s1, s2} {
				go func() { _, err := catalog.Of(s).Entries(ctx); errs <- err }()
			}
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			es, err := catalog.Of(s1).Entries(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != 2 || es[0].Name != "orders" || es[1].Name != "invoices" || es[0].First.UnixMicro() != 1764000000000000 || es[1].By != "fixture" {
				t.Fatalf("after the migration the catalog holds %+v; want the release's two entries", es)
			}
			var left int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sn_ledger_catalog`).Scan(&left); err != nil || left != 0 {
				t.Fatalf("the release's table holds %d entries after the migration (%v)", left, err)
			}
			if v, err := sequence.Remember(ctx, s2, "sn obfuscate k", "check-2"); v != "check-1" || err != nil {
				t.Fatalf("the release's record of a key's check value: %q, %v; want check-1", v, err)
			}
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sn_ledger_records`).Scan(&left); err != nil || left != 0 {
				t.Fatalf("the release's table of records holds %d rows after the migration (%v)", left, err)
			}
			c, err := sequence.ReplayerOf(s2).Claim(ctx, "series\x00order-1", "digest-1", "retry", time.Minute)
			if err != nil || c.Mine || c.Answer != `["SN-000042"]` {
				t.Fatalf("a retry of the key the release answered: %+v, %v; want its answer", c, err)
			}
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sn_ledger_idem`).Scan(&left); err != nil || left != 0 {
				t.Fatalf("the release's table of claims holds %d rows (the one past its time swept, the other moved) (%v)", left, err)
			}
			if ok, err := catalog.Of(s1).Forget(ctx, "0123456789abcdef"); !ok || err != nil {
				t.Fatalf("Forget: %v %v", ok, err)
			}
			if err := s2.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if es, _ := catalog.Of(s2).Entries(ctx); len(es) != 1 || es[0].Name != "invoices" {
				t.Fatalf("after a Forget and another Migrate: %+v; want the invoices alone", es)
			}
		})
	}
}

// legacyJournalDDL are the journal's tables as the release before the
// records made them.
var legacyJournalDDL = map[sqlseq.Dialect][]string{
	sqlseq.Postgres: {`CREATE TABLE sn_ledger_journal (
	id bytea NOT NULL CHECK (octet_length(id) = 32),
	seq bigint NOT NULL,
	kind text NOT NULL,
	first_n bigint NOT NULL,
	last_n bigint NOT NULL,
	at_us bigint NOT NULL,
	by_name text NOT NULL,
	actor text NOT NULL,
	reason text NOT NULL,
	deadline_us bigint NOT NULL,
	hash bytea NOT NULL,
	PRIMARY KEY (id, seq)
)`, `CREATE TABLE sn_ledger_jhead (
	id bytea PRIMARY KEY CHECK (octet_length(id) = 32),
	k bytea NOT NULL,
	seq bigint NOT NULL,
	hash bytea NOT NULL,
	mark bigint NOT NULL
)`},
	sqlseq.MySQL: {`CREATE TABLE sn_ledger_journal (
	id BINARY(32) NOT NULL,
	seq BIGINT NOT NULL,
	kind VARCHAR(16) NOT NULL,
	first_n BIGINT NOT NULL,
	last_n BIGINT NOT NULL,
	at_us BIGINT NOT NULL,
	by_name VARCHAR(1024) NOT NULL,
	actor VARCHAR(1024) NOT NULL,
	reason MEDIUMTEXT NOT NULL,
	deadline_us BIGINT NOT NULL,
	hash BINARY(32) NOT NULL,
	PRIMARY KEY (id, seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`, `CREATE TABLE sn_ledger_jhead (
	id BINARY(32) NOT NULL PRIMARY KEY,
	k LONGBLOB NOT NULL,
	seq BIGINT NOT NULL,
	hash BINARY(32) NOT NULL,
	mark BIGINT NOT NULL
) ENGINE=InnoDB`},
}

// legacyJournal writes, with the DDL of the release before the records,
// a journal of n records for each key, after allocating the numbers with
// s, and leaves no record of s's own; it returns each key's head, an
// anchor taken before the migration.
func legacyJournal(t *testing.T, b backend, db *sql.DB, s *sqlseq.Store, keys map[string]int) map[string]sequence.Head {
	t.Helper()
	ctx := context.Background()
	exec := func(stmt string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, advQ(b, stmt), args...); err != nil {
			t.Fatalf("%.60s: %v", stmt, err)
		}
	}
	for _, ddl := range legacyJournalDDL[b.dialect] {
		exec(ddl)
	}
	anchors := map[string]sequence.Head{}
	for key, n := range keys {
		r, err := s.Allocate(ctx, key, int64(n))
		if err != nil {
			t.Fatal(err)
		}
		// The earlier release's journal of those numbers: one record
		// per number drawn, written 200 rows a statement.
		var head sequence.Head
		id := sha256.Sum256([]byte(key))
		var vals []string
		var args []any
		flush := func() {
			if len(vals) > 0 {
				exec(`INSERT INTO sn_ledger_journal (id, seq, kind, first_n, last_n, at_us, by_name, actor, reason, deadline_us, hash) VALUES `+strings.Join(vals, ", "), args...)
				vals, args = nil, nil
			}
		}
		for v := r.First; v <= r.Last; v++ {
			var e sequence.Event
			e, head = sequence.Chain(head, key, sequence.Event{Kind: sequence.Drawn, Range: sequence.Range{First: v, Last: v}, Reason: "an earlier release"})
			vals = append(vals, "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
			args = append(args, id[:], e.Seq, e.Kind.String(), e.Range.First, e.Range.Last, e.At.UnixMicro(), e.By, e.Actor, e.Reason, int64(0), e.Hash[:])
			if len(vals) == 200 {
				flush()
			}
		}
		flush()
		head.Mark = r.Last
		exec(`INSERT INTO sn_ledger_jhead (id, k, seq, hash, mark) VALUES (?, ?, ?, ?, ?)`, id[:], []byte(key), head.Seq, head.Hash[:], head.Mark)
		anchors[key] = head
	}
	// This release's own records of the allocations, which the earlier
	// one did not write.
	exec(`DELETE FROM sn_ledger_kv WHERE k LIKE 'j%'`)
	return anchors
}

// TestMigrateJournal: journals an earlier release kept in tables of their
// own (2,300 records of one key, more than one batch, and a second key)
// move into the records when a Store of this release first writes, even
// before its Migrate (adversary run 4: an Allocate then appended after an
// empty head, and the chain broke): they verify against an anchor taken
// before, the counter goes on above the mark, and the old tables are
// empty. The control: before the migration, a Store of this release
// reads no journal there.
func TestMigrateJournal(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := newStore(t, b, db, sqlseq.Options{})
			anchors := legacyJournal(t, b, db, s, map[string]int{"inv": 2300, "order": 3})
			if h, err := s.Head(ctx, "inv"); err != nil || h.Seq != 0 {
				t.Fatalf("control: before the migration the Store reads head %+v, %v; want none", h, err)
			}
			s2, err := sqlseq.New(db, b.dialect, sqlseq.Options{}) // no Migrate: the first write runs it
			if err != nil {
				t.Fatal(err)
			}
			for key, anchor := range anchors {
				r, err := s2.Allocate(ctx, key, 1)
				if err != nil || r.First != anchor.Mark+1 {
					t.Errorf("%s: the next range %v, %v; want it above %d", key, r, err, anchor.Mark)
				}
				events, head, err := sequence.ReadJournal(ctx, s2, key)
				if err != nil {
					t.Fatal(err)
				}
				if err := sequence.VerifyChain(key, events, head, anchor); err != nil || head.Seq != anchor.Seq+1 {
					t.Errorf("%s after the migration and a new record: head %+v (anchor %+v), %d records: %v", key, head, anchor, len(events), err)
				}
			}
			for _, table := range []string{"sn_ledger_journal", "sn_ledger_jhead"} {
				var n int
				if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil || n != 0 {
					t.Errorf("%s after the migration: %d rows, %v", table, n, err)
				}
			}
		})
	}
}

// TestMigrateJournalPruneRace (from adversary run 4): five Stores
// migrate one journal of 2,500 records at once, while the first to
// finish allocates and prunes it again and again. A slower migrator that
// had read a batch before it was moved wrote again records a prune had
// removed, and the chain no longer verified (3 of 3 rounds on
// PostgreSQL). Each batch now locks the rows it moves. The control:
// round 0, one migrator.
func TestMigrateJournalPruneRace(t *testing.T) {
	ctx := context.Background()
	pub, sk, _ := ed25519.GenerateKey(nil)
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			for round := range 4 {
				migrators := 5
				if round == 0 {
					migrators = 1
				}
				db := b.open(t)
				legacyJournal(t, b, db, newStore(t, b, db, sqlseq.Options{}), map[string]int{"inv": 2500})
				first := make(chan *sqlseq.Store, migrators)
				var wg sync.WaitGroup
				for i := range migrators {
					wg.Go(func() {
						time.Sleep(time.Duration(i*3) * time.Millisecond)
						st, err := sqlseq.New(db, b.dialect, sqlseq.Options{})
						if err == nil {
							err = st.Migrate(ctx)
						}
						if err != nil {
							t.Error(err)
						}
						first <- st
					})
				}
				st := <-first
				done := make(chan struct{})
				go func() { wg.Wait(); close(done) }()
				for loop := true; loop; {
					select {
					case <-done:
						loop = false
					default:
					}
					if _, err := st.Allocate(ctx, "inv", 1); err != nil {
						t.Fatal(err)
					}
					events, _, err := sequence.ReadJournal(ctx, st, "inv")
					if err != nil {
						t.Fatal(err)
					}
					p, err := sequence.PruneRecord("inv", events[:len(events)-1], time.Now(), sk)
					if err != nil {
						t.Fatal(err)
					}
					st.Prune(ctx, "inv", p) // refused when the journal moved since the read
				}
				events, head, err := sequence.ReadJournal(ctx, st, "inv")
				if err != nil {
					t.Fatal(err)
				}
				if err := sequence.VerifySealed("inv", events, head, []ed25519.PublicKey{pub}); err != nil || len(events) != 2 {
					t.Errorf("round %d: %d records after the prunes (want 2): %v", round, len(events), err)
				}
			}
		})
	}
}

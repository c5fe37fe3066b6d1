package sqlseq_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/snowflake"
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
			c, err := claim.Of(s2).Claim(ctx, "series\x00order-1", "digest-1", "retry", time.Minute)
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
func legacyJournal(t *testing.T, b backend, db *sql.DB, s *sqlseq.Store, keys map[string]int) map[string]journal.Head {
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
	anchors := map[string]journal.Head{}
	for key, n := range keys {
		r, err := s.Allocate(ctx, key, int64(n))
		if err != nil {
			t.Fatal(err)
		}
		// The earlier release's journal of those numbers: one record
		// per number drawn, written 200 rows a statement.
		var head journal.Head
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
			var e journal.Event
			e, head = journal.Chain(head, key, journal.Event{Kind: journal.Drawn, Range: sequence.Range{First: v, Last: v}, Reason: "an earlier release"})
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
				events, head, err := journal.ReadJournal(ctx, s2, key)
				if err != nil {
					t.Fatal(err)
				}
				if err := journal.VerifyChain(key, events, head, anchor); err != nil || head.Seq != anchor.Seq+1 {
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
					events, _, err := journal.ReadJournal(ctx, st, "inv")
					if err != nil {
						t.Fatal(err)
					}
					p, err := journal.PruneRecord("inv", events[:len(events)-1], time.Now(), sk)
					if err != nil {
						t.Fatal(err)
					}
					st.Prune(ctx, "inv", p) // refused when the journal moved since the read
				}
				events, head, err := journal.ReadJournal(ctx, st, "inv")
				if err != nil {
					t.Fatal(err)
				}
				if err := journal.VerifySealed("inv", events, head, []ed25519.PublicKey{pub}); err != nil || len(events) != 2 {
					t.Errorf("round %d: %d records after the prunes (want 2): %v", round, len(events), err)
				}
			}
		})
	}
}

// releaseE791946KV is the table of records of release e791946, the last
// before the leases moved into the records.
var releaseE791946KV = map[sqlseq.Dialect]string{
	sqlseq.Postgres: `CREATE TABLE sn_ledger_kv (k bytea PRIMARY KEY, v bytea NOT NULL, ver bigint NOT NULL)`,
	sqlseq.MySQL:    `CREATE TABLE sn_ledger_kv (k VARBINARY(1536) NOT NULL PRIMARY KEY, v MEDIUMBLOB NOT NULL, ver BIGINT NOT NULL) ENGINE=InnoDB`,
}

// releaseE791946Workers is its table of worker-id leases.
var releaseE791946Workers = map[sqlseq.Dialect]string{
	sqlseq.Postgres: `CREATE TABLE sn_ledger_workers (
	name bytea NOT NULL,
	worker bigint NOT NULL CHECK (worker >= 0),
	token text NOT NULL,
	deadline timestamptz NOT NULL,
	bound bigint NOT NULL,
	PRIMARY KEY (name, worker)
)`,
	sqlseq.MySQL: `CREATE TABLE sn_ledger_workers (
	name VARBINARY(255) NOT NULL,
	worker BIGINT NOT NULL,
	token VARBINARY(64) NOT NULL,
	deadline DATETIME(6) NOT NULL,
	bound BIGINT NOT NULL,
	PRIMARY KEY (name, worker)
) ENGINE=InnoDB`,
}

// TestMigrateWorkers opens a ledger whose worker-id leases release
// e791946 kept in a table of their own: a live holder of id 0, whose
// renewal (the control) sets its deadline 4s away, and id 1, released
// with a bound; and the layout of their name in its records. Three
// Stores migrate at once. Then a
// Lease in another layout is refused, and one in the layout takes id 1
// first, with its bound; id 0 stays held until its deadline, and is then
// leased with its bound; and the release's own statements, run by a
// process of it still running, renew nothing (its lease is lost) and take
// nothing (the table in place of its own takes no row), and its check of
// the layout reads one that is no layout. The control: before the
// migration, the release's renewal renews.
func TestMigrateWorkers(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			db := b.open(t)
			q := func(s string) string {
				if b.dialect == sqlseq.MySQL {
					return strings.NewReplacer("now()", "UTC_TIMESTAMP(6)", "interval '2 seconds'", "INTERVAL 2 SECOND", "interval '4 seconds'", "INTERVAL 4 SECOND", "interval '1 minute'", "INTERVAL 1 MINUTE",
						"interval '1 second'", "INTERVAL 1 SECOND", "$1", "?").Replace(s)
				}
				return s
			}
			live, released := time.Now().Add(time.Hour).UnixNano(), time.Now().Add(2*time.Hour).UnixNano()
			for _, s := range []string{
				releaseE791946KV[b.dialect],
				`INSERT INTO sn_ledger_kv VALUES ('r/snowflake layout snowflake', '` + tiny.String() + `', 1)`,
				releaseE791946Workers[b.dialect],
				q(`INSERT INTO sn_ledger_workers VALUES ('snowflake', 0, 'live', now() + interval '1 minute', ` + strconv.FormatInt(live, 10) + `)`),
				q(`INSERT INTO sn_ledger_workers VALUES ('snowflake', 1, '', now() - interval '1 second', ` + strconv.FormatInt(released, 10) + `)`),
			} {
				if _, err := db.ExecContext(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			// The release's renewal of its live lease, as lease.go wrote it.
			renew := q(`UPDATE sn_ledger_workers SET deadline = now() + interval '4 seconds', bound = $1 WHERE name = 'snowflake' AND worker = 0 AND token = 'live' AND deadline > now()`)
			renewed := func() int64 {
				res, err := db.ExecContext(ctx, renew, live)
				if err != nil {
					t.Fatal(err)
				}
				n, _ := res.RowsAffected()
				return n
			}
			if n := renewed(); n != 1 {
				t.Fatalf("control: the release's renewal before the migration renewed %d rows, want 1", n)
			}
			var wg sync.WaitGroup
			stores := make([]*sqlseq.Store, 3)
			for i := range stores {
				stores[i], _ = sqlseq.New(db, b.dialect, sqlseq.Options{})
				wg.Go(func() {
					if err := stores[i].Migrate(ctx); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			if n := renewed(); n != 0 {
				t.Errorf("the release's renewal after the migration renewed %d rows, want 0: its lease is lost", n)
			}
			if _, err := db.ExecContext(ctx, q(`INSERT INTO sn_ledger_workers VALUES ('other', 0, 'mine', now() + interval '2 seconds', 0)`)); err == nil {
				t.Error("the release's table took a new lease after the migration")
			}
			var moved int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sn_ledger_wmoved`).Scan(&moved); err != nil || moved != 2 {
				t.Errorf("the moved table holds %d rows (%v), want the release's 2", moved, err)
			}
			if got, err := sequence.Remember(ctx, stores[0], "snowflake layout snowflake", tiny.String()); err != nil || !strings.Contains(got, "upgrade every process") {
				t.Errorf("the release's check of the layout reads %q, %v; want a value that is no layout, saying to upgrade", got, err)
			}
			l := must(sqlseq.NewLeaser(stores[0], sqlseq.LeaserOptions{}))
			if _, err := l.Lease(ctx, snowflake.Twitter, time.Minute); !errors.Is(err, snowflake.ErrLayout) {
				t.Errorf("a Lease in another layout than the release's: %v; want ErrLayout", err)
			}
			first, err := l.Lease(ctx, tiny, time.Minute)
			if err != nil || first.Worker() != 1 || first.Bound().UnixNano() != released {
				t.Fatalf("first Lease: %v; want id 1, released, with its bound %d", err, released)
			}
			if _, err := l.Lease(ctx, tiny, time.Minute); !errors.Is(err, sequence.ErrUnavailable) {
				t.Fatalf("a Lease while the release's holder's deadline runs: %v; want ErrUnavailable", err)
			}
			var second snowflake.Lease
			for deadline := time.Now().Add(20 * time.Second); second == nil; time.Sleep(100 * time.Millisecond) {
				if second, err = l.Lease(ctx, tiny, time.Minute); err != nil && time.Now().After(deadline) {
					t.Fatalf("id 0 never came free after its deadline: %v", err)
				}
			}
			if second.Worker() != 0 || second.Bound().UnixNano() != live {
				t.Errorf("after the deadline: id %d with bound %v; want id 0 with the release holder's bound %d", second.Worker(), second.Bound().UnixNano(), live)
			}
			if err := stores[1].Migrate(ctx); err != nil {
				t.Errorf("a Migrate after: %v", err)
			}
			// The record that says the leases moved, deleted by hand: a
			// Store started after says it again, and the fence stays.
			if _, err := db.ExecContext(ctx, `DELETE FROM sn_ledger_kv WHERE k = 'm/workers'`); err != nil {
				t.Fatal(err)
			}
			if err := must(sqlseq.New(db, b.dialect, sqlseq.Options{})).Migrate(ctx); err != nil {
				t.Errorf("Migrate after the record of the move was deleted: %v", err)
			}
			if _, err := db.ExecContext(ctx, q(`INSERT INTO sn_ledger_workers VALUES ('other', 1, 'mine', now() + interval '2 seconds', 0)`)); err == nil {
				t.Error("the release's table took a new lease after a Migrate that found the record of the move deleted")
			}
		})
	}
}

package sqlseq_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/snowflake"
	"github.com/sngen/sn/sequence/sqlseq"
)

var roleSeq atomic.Int64

// asRole returns the DSN of dsn's database for a new role (made by the
// superuser of db) that may log in and nothing else, and the role as
// Grants writes it. On PostgreSQL the role may not create in the schema
// public either.
func asRole(t *testing.T, b backend, db *sql.DB, dsn string) (string, string) {
	t.Helper()
	name := fmt.Sprintf("sn_app_%d_%d", time.Now().UnixNano()%1e6, roleSeq.Add(1))
	const password = "app-secret"
	exec := func(stmt string) {
		t.Helper()
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if b.dialect == sqlseq.Postgres {
		exec(`CREATE ROLE ` + name + ` LOGIN PASSWORD '` + password + `'`)
		exec(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`)
		t.Cleanup(func() {
			db.Exec(`DROP OWNED BY ` + name)
			db.Exec(`DROP ROLE ` + name)
		})
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(name, password)
		return u.String(), name
	}
	role := `'` + name + `'@'%'`
	exec(`CREATE USER ` + role + ` IDENTIFIED BY '` + password + `'`)
	t.Cleanup(func() { db.Exec(`DROP USER ` + role) })
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.User, cfg.Passwd = name, password
	return cfg.FormatDSN(), role
}

// A DBA makes sn's tables with Store.Schema and gives a role the rights
// of Store.Grants, and nothing else: no right to create. The role runs
// everything sn does on the ledger: Migrate (which creates nothing that
// exists), blocks through a Segment, the catalog, a gapless draw in a
// transaction, a hold committed, an idempotency key, a journal's void,
// expiring keys, and leased snowflake worker ids. The control: the same
// role on a database whose tables were not made fails at Migrate, saying
// which table and what to run.
func TestDBARole(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			admin, dsn := b.openDSN(t)
			owner, err := sqlseq.New(admin, b.dialect, sqlseq.Options{Table: "billing_ledger"})
			if err != nil {
				t.Fatal(err)
			}
			appDSN, role := asRole(t, b, admin, dsn)
			app, err := sql.Open(b.driver, appDSN)
			if err != nil {
				t.Fatal(err)
			}
			defer app.Close()

			// The control first: no tables yet, and the role may not
			// make them.
			bare, _ := sqlseq.New(app, b.dialect, sqlseq.Options{Table: "billing_ledger"})
			err = bare.Migrate(ctx)
			if err == nil || !strings.Contains(err.Error(), "Store.Schema") || !strings.Contains(err.Error(), "sn ddl") {
				t.Fatalf("control: Migrate as a role that may not create tables, with none made: %v", err)
			}
			t.Logf("control: %v", err)

			for _, stmt := range append(owner.Schema(), owner.Grants(role)...) {
				if _, err := admin.Exec(stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			// Twice: each statement makes only what is missing.
			for _, stmt := range owner.Schema() {
				if _, err := admin.Exec(stmt); err != nil {
					t.Fatalf("again: %s: %v", stmt, err)
				}
			}

			s, err := sqlseq.New(app, b.dialect, sqlseq.Options{Table: "billing_ledger"})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("Migrate as the role on the DBA's tables: %v", err)
			}
			if err := s.CheckReplication(ctx); err != nil {
				t.Fatalf("CheckReplication as the role: %v", err)
			}
			seg, err := sequence.NewSegment(s, sequence.SegmentOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer seg.Close()
			orders, err := sn.New(`ORD-@<seq, width=6>`, sn.WithSequence("seq", seg))
			if err != nil {
				t.Fatal(err)
			}
			if err := orders.Enroll(ctx); err != nil {
				t.Fatalf("Enroll: %v", err)
			}
			if n, err := orders.Issue(ctx, sn.Request{N: 3, IdempotencyKey: "order-1"}); err != nil || n[0] != "ORD-000001" {
				t.Fatalf("orders: %v %v", n, err)
			}
			invoices, err := sn.New(`INV-@<seq, width=6>`, sn.WithSequence("seq", s.Gapless()), sn.WithProfile("gapless"))
			if err != nil {
				t.Fatal(err)
			}
			var drawn []string
			if err := invoices.Transact(ctx, func(ctx context.Context) error {
				drawn, err = invoices.Issue(ctx, sn.Request{IdempotencyKey: "inv-1"})
				return err
			}); err != nil || drawn[0] != "INV-000001" {
				t.Fatalf("a gapless draw: %v %v", drawn, err)
			}
			h, err := invoices.Hold(ctx, sn.Request{}, time.Hour)
			if err != nil {
				t.Fatalf("Hold: %v", err)
			}
			if err := invoices.Commit(ctx, h.Number); err != nil {
				t.Fatalf("Commit: %v", err)
			}
			h, _ = invoices.Hold(ctx, sn.Request{}, time.Hour)
			if err := invoices.VoidHold(ctx, h.Number, "draft abandoned"); err != nil {
				t.Fatalf("VoidHold: %v", err)
			}
			if err := orders.Void(ctx, "ORD-000002", "cancelled"); err != nil {
				t.Fatalf("Void: %v", err)
			}
			if err := s.Expire(ctx, "session-1", time.Hour); err != nil {
				t.Fatalf("Expire: %v", err)
			}
			leaser, err := sqlseq.NewLeaser(s, sqlseq.LeaserOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ids, err := snowflake.New(ctx, snowflake.Sonyflake, snowflake.Options{Leaser: leaser, TTL: 3 * time.Second})
			if err != nil {
				t.Fatalf("a leased worker id: %v", err)
			}
			if _, err := ids.Next(ctx, ""); err != nil {
				t.Fatalf("a snowflake id: %v", err)
			}
			ids.Close()
			t.Logf("role %s: migrate, blocks, catalog, gapless draw, hold, void, expiry and a leased worker id, with %d grants", role, len(owner.Grants(role)))
		})
	}
}

// On a primary with a synchronous standby, the role of Store.Grants
// passes the check of replication and draws: pg_monitor lets it see the
// standby's state. The control: the same role without pg_monitor is
// refused, for the standby's state is hidden from it.
func TestDBARoleSyncStandby(t *testing.T) {
	ctx := context.Background()
	primary, _, owner := pair(t, true, sqlseq.Options{})
	admin := primary.DB(t, primary.DSN())
	appDSN, role := asRole(t, postgresBackend(), admin, primary.DSN())
	for _, stmt := range append(owner.Schema(), owner.Grants(role)...) {
		if _, err := admin.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	app, err := sql.Open("pgx", appDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	s := must(sqlseq.New(app, sqlseq.Postgres, sqlseq.Options{}))
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckReplication(ctx); err != nil {
		t.Fatalf("CheckReplication with pg_monitor: %v", err)
	}
	if _, err := s.Allocate(ctx, "orders", 10); err != nil {
		t.Fatalf("Allocate with pg_monitor: %v", err)
	}
	if _, err := admin.Exec(`REVOKE pg_monitor FROM ` + role); err != nil {
		t.Fatal(err)
	}
	app2, _ := sql.Open("pgx", appDSN) // new sessions: the role's rights as they are now
	defer app2.Close()
	s2 := must(sqlseq.New(app2, sqlseq.Postgres, sqlseq.Options{}))
	err = s2.CheckReplication(ctx)
	if err == nil {
		t.Fatal("control: the role without pg_monitor passed the check of a primary with a standby")
	}
	t.Logf("control, without pg_monitor: %v", err)
}

// On a ledger of an earlier release (its own catalog table, its worker
// leases in "_workers"), Schema's statements write neither record that
// would make Migrate skip the move: those tables are moved by Migrate,
// as before. The control: on a new database, both records are written.
func TestSchemaLeavesAnEarlierRelease(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			records := func(db *sql.DB, s *sqlseq.Store, earlier bool) int {
				t.Helper()
				if earlier {
					bin := "bytea"
					if b.dialect == sqlseq.MySQL {
						bin = "VARBINARY(255)"
					}
					for _, stmt := range []string{
						`CREATE TABLE old_ledger_catalog (id ` + bin + ` PRIMARY KEY)`,
						`CREATE TABLE old_ledger_workers (name ` + bin + ` NOT NULL, worker BIGINT NOT NULL, PRIMARY KEY (name, worker))`,
					} {
						if _, err := db.Exec(stmt); err != nil {
							t.Fatalf("%s: %v", stmt, err)
						}
					}
				}
				for _, stmt := range s.Schema() {
					if _, err := db.Exec(stmt); err != nil {
						t.Fatalf("%s: %v", stmt, err)
					}
				}
				var n int
				if err := db.QueryRow(`SELECT count(*) FROM old_ledger_kv`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			db := b.open(t)
			if n := records(db, must(sqlseq.New(db, b.dialect, sqlseq.Options{Table: "old_ledger"})), true); n != 0 {
				t.Errorf("on a ledger of an earlier release, Schema wrote %d records", n)
			}
			fresh := b.open(t)
			if n := records(fresh, must(sqlseq.New(fresh, b.dialect, sqlseq.Options{Table: "old_ledger"})), false); n != 2 {
				t.Errorf("control: on a new database, Schema wrote %d records, want 2", n)
			}
		})
	}
}

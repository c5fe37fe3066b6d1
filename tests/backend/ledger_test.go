package backend_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/internal/mysqltest"
	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sqlseq"
)

// database is a kind of ledger the tests run against.
type database struct {
	name    string
	dialect sqlseq.Dialect
	// fresh returns the ledger URL of a new, empty database, and a
	// connection to it closed when the test ends.
	fresh func(t *testing.T) (string, *sql.DB)
}

// databases are PostgreSQL and MariaDB, each a real server of the test
// binary.
var databases = []database{
	{"postgres", sqlseq.Postgres, func(t *testing.T) (string, *sql.DB) {
		srv := pgtest.Shared(t)
		dsn := srv.NewDatabase(t) // a postgres:// URL already
		return dsn, srv.DB(t, dsn)
	}},
	{"mariadb", sqlseq.MySQL, func(t *testing.T) (string, *sql.DB) {
		srv := mysqltest.Shared(t)
		dsn := srv.NewDatabase(t)
		return mysqlURL(t, dsn), srv.DB(t, dsn)
	}},
}

// mysqlURL turns a go-sql-driver DSN into the mysql:// URL a config
// names a ledger with.
func mysqlURL(t *testing.T, dsn string) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u := url.URL{Scheme: "mysql", User: url.UserPassword(cfg.User, cfg.Passwd), Host: cfg.Addr, Path: "/" + cfg.DBName}
	return u.String()
}

// mark returns the ledger's high-water mark of key in table.
func mark(t *testing.T, db *sql.DB, d database, table, key string) int64 {
	t.Helper()
	st, err := sqlseq.New(db, d.dialect, sqlseq.Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	n, err := st.Last(t.Context(), key)
	if err != nil {
		t.Fatalf("the ledger's mark of %q in %s: %v", key, table, err)
	}
	return n
}

// issueOne builds cfg, issues one number of template name and closes the
// Set.
func issueOne(t *testing.T, cfg *config.Config, name string, opts ...config.BuildOption) string {
	t.Helper()
	set, err := cfg.Build(t.Context(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	s := issue(t, set, name, 1)[0]
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	return s
}

// The sql backend keeps its counters in the ledger: a Build creates the
// table, numbers continue across Builds, templates share the database, and
// a table of their own is a store of their own.
func TestSQL(t *testing.T) {
	for _, d := range databases {
		t.Run(d.name, func(t *testing.T) {
			ledger, db := d.fresh(t)
			cfg := &config.Config{
				Store: config.Sequence{Backend: "sql", Step: 10, Options: config.Options{"ledger": ledger}},
				Templates: map[string]config.Template{
					"a":     {Template: "A@<seq>", Floor: 300},
					"b":     {Template: "B@<seq>", Sequence: config.Sequence{Step: 50, MaxStep: 50}},
					"other": {Template: "O@<seq>", Sequence: config.Sequence{Options: config.Options{"table": "other_ledger"}}},
				},
			}
			prev := map[string]int64{"a": 300}
			for run := range 3 {
				set, err := cfg.Build(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				cur := map[string]int64{}
				for _, name := range []string{"a", "b", "other"} {
					for i, s := range issue(t, set, name, 15) {
						n := seqOf(t, s, strings.ToUpper(name[:1]))
						if i == 0 && n <= prev[name] {
							t.Errorf("run %d: %s starts at %d, at or below %d", run, name, n, prev[name])
						}
						if i > 0 && n <= cur[name] {
							t.Errorf("run %d: %s: %d after %d", run, name, n, cur[name])
						}
						cur[name] = n
					}
				}
				if err := set.Close(); err != nil {
					t.Fatal(err)
				}
				if m := mark(t, db, d, sqlseq.DefaultTable, "A@<seq>"); m < cur["a"] {
					t.Errorf("run %d: the ledger's mark of a is %d, below the issued %d", run, m, cur["a"])
				}
				if m := mark(t, db, d, "other_ledger", "O@<seq>"); m < cur["other"] {
					t.Errorf("run %d: the mark of other in its table is %d, below the issued %d", run, m, cur["other"])
				}
				prev = cur
			}
			// Exact reserves just what it issues: the number is the mark
			// after it, above the mark before. (Not always before+1: a
			// prefetch the Set's Close cancelled may still commit on a
			// loaded server, a gap.)
			before := mark(t, db, d, sqlseq.DefaultTable, "B@<seq>")
			got := seqOf(t, issueOne(t, cfg, "b", config.WithExact()), "B")
			if m := mark(t, db, d, sqlseq.DefaultTable, "B@<seq>"); got <= before || m != got {
				t.Errorf("exact: B%d with the mark %d before and %d after; want the number above the first and equal to the second", got, before, m)
			}
		})
	}
}

// Builds that share a ledger, as the machines of a cluster do, never
// issue one number twice, whatever their backend: sql, redis and
// redis-strict over their own Redis each.
func TestLedgerShared(t *testing.T) {
	for _, d := range databases {
		t.Run(d.name, func(t *testing.T) {
			ledger, _ := d.fresh(t)
			seqs := []config.Sequence{{Backend: "sql", Step: 7, Options: config.Options{"ledger": ledger}}, {Backend: "sql", Step: 7, Options: config.Options{"ledger": ledger}}, {Backend: "redis", Step: 5, Options: config.Options{"url": "redis://" + redistest.Start(t).Addr(), "ledger": ledger}}, {Backend: "redis-strict", Step: 5, Options: config.Options{"url": "redis://" + redistest.Start(t).Addr(), "ledger": ledger}}}
			var mu sync.Mutex
			seen := map[int64]int{}
			var wg sync.WaitGroup
			for i, s := range seqs {
				wg.Go(func() {
					set, err := one("@<ownerKey, value=K>N@<seq>", s).Build(t.Context())
					if err != nil {
						t.Error(err)
						return
					}
					defer set.Close()
					g, _ := set.Get("a")
					for range 60 {
						num, err := g.Next(t.Context())
						if err != nil {
							t.Error(i, err)
							return
						}
						n := seqOf(t, num, "KN")
						mu.Lock()
						if j, dup := seen[n]; dup {
							t.Errorf("%d issued by %s and %s", n, seqs[j].Backend, s.Backend)
						}
						seen[n] = i
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if len(seen) != 240 {
				t.Errorf("%d numbers, want 240", len(seen))
			}
		})
	}
}

// Redis serves blocks from ranges reserved from the ledger: when Redis
// comes back empty, flushed or restarted, the next numbers come from the
// ledger, above every number issued.
func TestRedisLedger(t *testing.T) {
	for _, d := range databases {
		t.Run(d.name, func(t *testing.T) {
			srv := redistest.Start(t) // no persistence: a restart is empty
			ledger, db := d.fresh(t)
			cfg := &config.Config{
				Store: config.Sequence{Backend: "redis", Step: 10, Options: config.Options{"url": "redis://" + srv.Addr(), "ledger": ledger, "table": "shop.ledger", "prefix": "t:"}},
				Templates: map[string]config.Template{
					"a": {Template: "A@<seq>", Floor: 300},
					"b": {Template: "B@<seq>"},
				},
			}
			if d.dialect == sqlseq.Postgres {
				if _, err := db.ExecContext(t.Context(), "CREATE SCHEMA shop"); err != nil {
					t.Fatal(err)
				}
			} else {
				cfg.Store.Options["table"] = "ledger" // a MySQL schema is a database
			}
			seen := map[string]bool{}
			var top int64
			lose := []func(){
				func() {},
				func() {
					if err := srv.Client(t).FlushAll(t.Context()).Err(); err != nil {
						t.Fatal(err)
					}
				},
				func() { srv.Stop(t); srv.Restart(t) },
			}
			for run, lose := range lose {
				lose()
				set, err := cfg.Build(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				for _, name := range []string{"a", "b"} {
					for _, s := range issue(t, set, name, 25) {
						if seen[s] {
							t.Errorf("run %d: %s issued twice", run, s)
						}
						seen[s] = true
					}
				}
				nums := issue(t, set, "a", 1)
				if n := seqOf(t, nums[0], "A"); n <= max(top, 300) {
					t.Errorf("run %d: a gave %d, at or below %d", run, n, max(top, 300))
				} else {
					top = n
				}
				if err := set.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if m := mark(t, db, d, cfg.Store.Options["table"].(string), "A@<seq>"); m < top {
				t.Errorf("the ledger's mark of a is %d, below the issued %d", m, top)
			}
			keys, err := srv.Client(t).Keys(t.Context(), "t:*").Result()
			if err != nil || len(keys) == 0 {
				t.Errorf("keys under the prefix: %q, %v", keys, err)
			}
		})
	}
}

// The strict counter is refilled from the ledger: first come, first
// served, and above everything issued after Redis loses its data.
func TestRedisStrictLedger(t *testing.T) {
	for _, d := range databases {
		t.Run(d.name, func(t *testing.T) {
			srv := redistest.Start(t)
			ledger, db := d.fresh(t)
			cfg := &config.Config{
				Store: config.Sequence{Backend: "redis-strict", Step: 4, Options: config.Options{"url": "redis://" + srv.Addr(), "ledger": ledger}},
				Templates: map[string]config.Template{
					"a": {Template: "@<ownerKey, value=K>A@<seq>"},
					"b": {Template: "@<ownerKey, value=K>B@<seq>"}, // the same counter
					// The same ledger, served through a Segment.
					"c": {Template: "C@<seq>", Sequence: config.Sequence{Backend: "sql", Step: 10}},
				},
			}
			set, err := cfg.Build(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, name := range []string{"a", "b", "a", "b", "a", "c"} {
				got = append(got, issue(t, set, name, 1)...)
			}
			if want := []string{"KA1", "KB2", "KA3", "KB4", "KA5", "C1"}; !cmp.Equal(got, want) {
				t.Errorf("numbers = %q, want %q (first come, first served)", got, want)
			}
			if err := srv.Client(t).FlushAll(t.Context()).Err(); err != nil {
				t.Fatal(err)
			}
			if after := issue(t, set, "a", 1); seqOf(t, after[0], "KA") <= 5 {
				t.Errorf("after FLUSHALL: %s, want above KA5", after[0])
			}
			if err := set.Close(); err != nil {
				t.Fatal(err)
			}
			if m := mark(t, db, d, sqlseq.DefaultTable, "K"); m < 8 {
				t.Errorf("ledger mark = %d, want at least 8 (two refills of 4)", m)
			}
		})
	}
}

// sn floor raises a counter through every store.
func TestLedgerFloor(t *testing.T) {
	ledger, _ := databases[0].fresh(t)
	srv := redistest.Start(t)
	for _, s := range []config.Sequence{{Backend: "sql", Options: config.Options{"ledger": ledger}}, {Backend: "redis", Options: config.Options{"url": "redis://" + srv.Addr(), "ledger": ledger, "prefix": "r:"}}, {Backend: "redis-strict", Options: config.Options{"url": "redis://" + srv.Addr(), "ledger": ledger, "prefix": "s:"}}} {
		t.Run(s.Backend, func(t *testing.T) {
			text := "@<ownerKey, value=" + s.Backend + ">-@<seq>"
			cfg := one(text, s)
			cfg.Templates["a"] = config.Template{Template: text, Sequence: s, Floor: 1000}
			for _, exact := range []bool{false, true} {
				var opts []config.BuildOption
				if exact {
					opts = append(opts, config.WithExact())
				}
				if got := issueOne(t, cfg, "a", opts...); seqOf(t, got, s.Backend+"-") <= 1000 {
					t.Errorf("exact %v: %s, want above 1000", exact, got)
				}
			}
		})
	}
}

// A ledger that does not answer fails Build within fetch_timeout, and its
// password shows nowhere.
func TestLedgerUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	srv := redistest.Start(t)
	for _, s := range []config.Sequence{{Backend: "sql", Options: config.Options{"ledger": "postgres://u:secret@" + addr + "/db?sslmode=disable"}}, {Backend: "sql", Options: config.Options{"ledger": "mysql://u:secret@" + addr + "/db"}}, {Backend: "redis", Options: config.Options{"url": "redis://" + srv.Addr(), "ledger": "postgres://u:secret@" + addr + "/db?sslmode=disable"}}, {Backend: "redis-strict", Options: config.Options{"url": "redis://" + srv.Addr(), "ledger": "mysql://u:secret@" + addr + "/db"}}} {
		ledger := s.Options["ledger"].(string)
		t.Run(s.Backend+" "+strings.Split(ledger, ":")[0], func(t *testing.T) {
			s.FetchTimeout = "300ms"
			_, err := one("A@<seq>", s).Build(t.Context())
			if !errors.Is(err, sequence.ErrUnavailable) {
				t.Errorf("Build = %v, want sequence.ErrUnavailable", err)
			}
			shown := strings.Replace(ledger, "secret", "xxxxx", 1)
			if want := fmt.Sprintf(`config: template "a": %s sequence: backend/sql: ledger %s: no answer within 300ms: sqlseq: migrate (table sn_ledger): `, s.Backend, shown); err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Build = %v\nwant it to start with %s", err, want)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("Build = %v: the password shows", err)
			}
		})
	}
}

// The store of a template is its ledger and table: templates that print
// the same numbers may share a ledger table (they share its counters), not
// draw from two.
func TestLedgerIdentity(t *testing.T) {
	pg := "postgres://u:pw@db/orders"
	tests := []struct {
		name string
		a, b config.Sequence
		ok   bool
	}{
		{"one table", config.Sequence{Backend: "sql", Options: config.Options{"ledger": pg}}, config.Sequence{Backend: "sql", Step: 5, Options: config.Options{"ledger": pg}}, true},
		{"two tables", config.Sequence{Backend: "sql", Options: config.Options{"ledger": pg}}, config.Sequence{Backend: "sql", Options: config.Options{"ledger": pg, "table": "other"}}, false},
		{"two databases", config.Sequence{Backend: "sql", Options: config.Options{"ledger": pg}}, config.Sequence{Backend: "sql", Options: config.Options{"ledger": "mysql://u:pw@db/orders"}}, false},
		{"redis over one ledger", config.Sequence{Backend: "redis", Options: config.Options{"url": "redis://r", "ledger": pg}}, config.Sequence{Backend: "redis", Options: config.Options{"url": "redis://r", "ledger": pg}}, true},
		{"redis over two ledgers", config.Sequence{Backend: "redis", Options: config.Options{"url": "redis://r", "ledger": pg}}, config.Sequence{Backend: "redis", Options: config.Options{"url": "redis://r", "ledger": pg, "table": "other"}}, false},
		{"redis with and without a ledger", config.Sequence{Backend: "redis", Options: config.Options{"url": "redis://r", "ledger": pg}}, config.Sequence{Backend: "redis", Options: config.Options{"url": "redis://r"}}, false},
		{"strict over two ledgers", config.Sequence{Backend: "redis-strict", Options: config.Options{"url": "redis://r", "ledger": pg}}, config.Sequence{Backend: "redis-strict", Options: config.Options{"url": "redis://r", "ledger": pg + "2"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config.Config{Templates: map[string]config.Template{
				"a": {Template: "@<ownerKey, value=K>-@<seq>", Sequence: tt.a},
				"b": {Template: "@<ownerKey, value=K>-@<seq>", Sequence: tt.b},
			}}
			err := cfg.Validate()
			if tt.ok && err != nil {
				t.Errorf("Validate = %v, want nil", err)
			}
			if !tt.ok && !errors.Is(err, sn.ErrAmbiguous) {
				t.Errorf("Validate = %v, want sn.ErrAmbiguous", err)
			}
		})
	}
}

// A Build opens one *sql.DB per ledger URL, however many templates and
// tables use it, and the Set closes it.
func TestLedgerOneConnectionPool(t *testing.T) {
	srv := pgtest.Shared(t)
	ledger := srv.NewDatabase(t)
	db := srv.DB(t, ledger)
	names := []string{"a", "b", "c", "d"}
	cfg := &config.Config{Store: config.Sequence{Backend: "sql", Options: config.Options{"ledger": ledger + "&application_name=sn_pool_test"}}, Templates: map[string]config.Template{}}
	for i, name := range names {
		s := config.Sequence{}
		if i%2 == 1 {
			s.Options = config.Options{"table": "ledger_" + name}
		}
		cfg.Templates[name] = config.Template{Template: strings.ToUpper(name) + "@<seq>", Sequence: s}
	}
	set, err := cfg.Build(t.Context(), config.WithExact())
	if err != nil {
		t.Fatal(err)
	}
	// Exact: one statement per number, each on an idle connection of the
	// pool, so one pool holds one connection however many templates use
	// it.
	for _, name := range names {
		issue(t, set, name, 1)
	}
	count := func() int {
		var n int
		err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'sn_pool_test'").Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 1 {
		t.Errorf("%d connections to the ledger, want 1 (one pool per URL)", n)
	}
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if count() == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond) // the server ends its backends on its own time
	}
	t.Errorf("after Close, %d connections remain", count())
}

// tables lists the tables of the current database (schema).
func tables(t *testing.T, db *sql.DB, d database) []string {
	t.Helper()
	current := "current_schema()"
	if d.dialect == sqlseq.MySQL {
		current = "DATABASE()"
	}
	rows, err := db.QueryContext(t.Context(), "SELECT table_name FROM information_schema.tables WHERE table_schema = "+current)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Validate opens nothing; Build creates the ledger's tables, and a second
// Build finds them.
func TestLedgerMigrate(t *testing.T) {
	for _, d := range databases {
		t.Run(d.name, func(t *testing.T) {
			ledger, db := d.fresh(t)
			cfg := &config.Config{
				Store: config.Sequence{Backend: "sql", Options: config.Options{"ledger": ledger}},
				Templates: map[string]config.Template{
					"a": {Template: "A@<seq>"},
					"b": {Template: "B@<seq>", Sequence: config.Sequence{Options: config.Options{"table": "numbers"}}},
				},
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := tables(t, db, d); len(got) != 0 {
				t.Errorf("after Validate: tables %q, want none", got)
			}
			for range 2 {
				set, err := cfg.Build(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if err := set.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := tables(t, db, d), []string{
				"numbers", "numbers_expiry", "numbers_holds", "numbers_kv", "numbers_workers",
				"sn_ledger", "sn_ledger_expiry", "sn_ledger_holds", "sn_ledger_kv", "sn_ledger_workers",
			}; !cmp.Equal(got, want) {
				t.Errorf("tables %q, want %q", got, want)
			}
		})
	}
}

package main

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn/internal/etcdtest"
	"github.com/sngen/sn/internal/mysqltest"
	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/internal/redistest"
)

// ledgers returns the URLs of a new, empty PostgreSQL database, a new,
// empty MariaDB database and a new prefix in an etcd cluster, by name, with
// the backend that issues from each alone.
func ledgers(t *testing.T) []struct{ name, url, backend string } {
	t.Helper()
	cfg, err := mysql.ParseDSN(mysqltest.Shared(t).NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	my := url.URL{Scheme: "mysql", User: url.UserPassword(cfg.User, cfg.Passwd), Host: cfg.Addr, Path: "/" + cfg.DBName}
	var hosts []string
	for _, ep := range etcdtest.Shared(t).Endpoints() {
		hosts = append(hosts, strings.TrimPrefix(ep, "http://"))
	}
	etcd := fmt.Sprintf("etcd://%s/%s-%d/", strings.Join(hosts, ","), t.Name(), etcdPrefixes.Add(1))
	return []struct{ name, url, backend string }{
		{"postgres", pgtest.Shared(t).NewDatabase(t), "sql"},
		{"mariadb", my.String(), "sql"},
		{"etcd", etcd, "etcd"},
	}
}

// etcdPrefixes numbers the etcd ledgers the tests make.
var etcdPrefixes atomic.Int64

// number reads the number after prefix in s.
func number(t *testing.T, s, prefix string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimPrefix(s, prefix))
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

// sn next --ledger keeps the numbers in the database alone: runs continue
// exactly, the table is created on first use, and sn floor raises them.
func TestLedger(t *testing.T) {
	for _, l := range ledgers(t) {
		t.Run(l.name, func(t *testing.T) {
			if got := ok(t, "next", "-t", luhnTpl, "--ledger", l.url, "-n", "3"); !cmp.Equal(got, []string{"SN-00000001-8", "SN-00000002-6", "SN-00000003-4"}) {
				t.Errorf("first run: %q", got)
			}
			if got := ok(t, "next", "--ledger", l.url, "-t", luhnTpl, "-n", "2"); !cmp.Equal(got, []string{"SN-00000004-2", "SN-00000005-9"}) {
				t.Errorf("second run: %q", got)
			}
			if got := ok(t, "floor", "-t", "INV@<seq, width=4>", "--ledger", l.url, "INV0041", "INV0007"); !cmp.Equal(got, []string{`counter "INV@<seq>": raised above 41 (the largest of 2 numbers)`}) {
				t.Errorf("floor: %q", got)
			}
			if got := ok(t, "next", "-t", "INV@<seq, width=4>", "--ledger", l.url); !cmp.Equal(got, []string{"INV0042"}) {
				t.Errorf("after the floor: %q, want INV0042", got)
			}
			// A config file names the same ledger: the same counters.
			cfg := writeConfig(t, t.TempDir(), "sn.yaml", fmt.Sprintf("store: {backend: %s, ledger: %q}\ntemplates:\n  orders: {template: %q}\n", l.backend, l.url, luhnTpl))
			if got := ok(t, "next", "--config", cfg, "orders"); !cmp.Equal(got, []string{"SN-00000006-7"}) {
				t.Errorf("from the config file: %q, want SN-00000006-7", got)
			}
			// A file without a store takes the one of --ledger.
			bare := writeConfig(t, t.TempDir(), "sn.yaml", fmt.Sprintf("templates:\n  orders: {template: %q}\n", luhnTpl))
			if got := ok(t, "next", "--config", bare, "orders", "--ledger", l.url); !cmp.Equal(got, []string{"SN-00000007-5"}) {
				t.Errorf("config file without a store: %q, want SN-00000007-5", got)
			}
		})
	}
}

// A ledger that is not a database URL is bad usage, and its password
// shows nowhere.
func TestLedgerErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"scheme", []string{"next", "-t", "A@<seq>", "--ledger", "sqlite://u:secret@/x.db"}, 2,
			`sn: config: ledger "sqlite://u:xxxxx@/x.db": unknown scheme "sqlite" (want postgres, postgresql or mysql: postgres://user:password@host:5432/db or mysql://user:password@host:3306/db)`},
		{"not a URL", []string{"floor", "-t", "A@<seq>", "--ledger", "sn.db", "A5"}, 2,
			`sn: config: ledger "sn.db": want a URL such as postgres://user:password@host:5432/db or mysql://user:password@host:3306/db`},
		{"mysql without a database", []string{"next", "-t", "A@<seq>", "--redis", "redis://x", "--ledger", "mysql://u:secret@db:3306/"}, 2,
			`sn: config: ledger "mysql://u:xxxxx@db:3306/": want a database name, as in mysql://user:password@host:3306/db`},
		{"unreachable", []string{"next", "-t", "A@<seq>", "--ledger", "postgres://u:secret@127.0.0.1:1/db?sslmode=disable"}, 1,
			`sn: backend/sql: ledger postgres://u:xxxxx@127.0.0.1:1/db?sslmode=disable: `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runSN(t, "", nil, tt.args...)
			if r.code != tt.code || r.stdout != "" || !strings.HasPrefix(r.stderr, tt.want) || strings.Contains(r.stderr, "secret") ||
				tt.code == 1 && !strings.Contains(r.stderr, "sqlseq: migrate (table sn_ledger): sequence: unavailable: ") {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d and a line starting:\n%s", r.code, r.stdout, r.stderr, tt.code, tt.want)
			}
		})
	}
}

// sn next --redis URL --ledger DSN serves numbers from Redis ranges
// reserved from the ledger: runs continue, and after Redis comes back
// empty (flushed, or restarted without persistence) they continue above
// every number issued, with a gap.
func TestRedisLedger(t *testing.T) {
	for _, l := range ledgers(t) {
		t.Run(l.name, func(t *testing.T) {
			srv := redistest.Start(t) // no persistence: a restart is empty
			redisURL := "redis://" + srv.Addr() + "/0"
			seen := map[string]bool{}
			top := 0
			next := func(what string, n int, args ...string) []string {
				t.Helper()
				got := ok(t, append([]string{"next", "-t", "R@<seq>", "--redis", redisURL, "--ledger", l.url, "-n", strconv.Itoa(n)}, args...)...)
				for _, s := range got {
					if seen[s] {
						t.Errorf("%s: %s issued again", what, s)
					}
					seen[s] = true
					if v := number(t, s, "R"); v <= top {
						t.Errorf("%s: %s at or below %d", what, s, top)
					} else {
						top = v
					}
				}
				return got
			}
			if got := next("first run", 3); !cmp.Equal(got, []string{"R1", "R2", "R3"}) {
				t.Errorf("first run: %q", got)
			}
			if got := next("second run", 2); !cmp.Equal(got, []string{"R4", "R5"}) {
				t.Errorf("second run: %q, want R4, R5", got)
			}
			if err := srv.Client(t).FlushAll(t.Context()).Err(); err != nil {
				t.Fatal(err)
			}
			next("after FLUSHALL", 3)
			srv.Stop(t)
			srv.Restart(t)
			next("after a restart", 3)
			// sn floor raises the ledger and Redis.
			floor := top + 1_000_000
			ok(t, "floor", "-t", "R@<seq>", "--redis", redisURL, "--ledger", l.url, fmt.Sprintf("R%d", floor))
			if got := next("after the floor", 1); number(t, got[0], "R") <= floor {
				t.Errorf("after the floor of %d: %s", floor, got[0])
			}

			// The strict counter: first come, first served, refilled from
			// the ledger.
			for run, want := range [][]string{{"S1", "S2"}, {"S3", "S4"}} {
				if got := ok(t, "next", "-t", "S@<seq>", "--redis", redisURL, "--strict", "--ledger", l.url, "-n", "2"); !cmp.Equal(got, want) {
					t.Errorf("strict run %d: %q, want %q", run, got, want)
				}
			}
			if err := srv.Client(t).FlushAll(t.Context()).Err(); err != nil {
				t.Fatal(err)
			}
			if got := ok(t, "next", "-t", "S@<seq>", "--redis", redisURL, "--strict", "--ledger", l.url); number(t, got[0], "S") <= 4 {
				t.Errorf("strict after FLUSHALL: %q, want above S4", got)
			}
		})
	}
}

// Two machines that share a Redis but not a ledger (two databases, or two
// tables) would each hand out what the other issued once Redis loses its
// data: the second is refused at its first number.
func TestRedisTwoLedgers(t *testing.T) {
	srv := redistest.Start(t)
	redisURL := "redis://" + srv.Addr() + "/0"
	pg := pgtest.Shared(t)
	first, second := pg.NewDatabase(t), pg.NewDatabase(t)
	for _, mode := range [][]string{nil, {"--strict"}} {
		t.Run(fmt.Sprint("strict=", len(mode) > 0), func(t *testing.T) {
			tpl := fmt.Sprintf("T%d@<seq>", len(mode))
			args := append([]string{"next", "-t", tpl, "--redis", redisURL, "-n", "3"}, mode...)
			if got := ok(t, append(args, "--ledger", first)...); len(got) != 3 {
				t.Fatalf("first machine: %q", got)
			}
			r := runSN(t, "", nil, append(args, "--ledger", second)...)
			if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "holds a range reserved from the ledger") ||
				!strings.Contains(r.stderr, "every process that uses one Redis must use one ledger") {
				t.Errorf("second machine, another ledger: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

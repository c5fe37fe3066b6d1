package pgtest_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sngen/sn/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func mustExec(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func names(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), "SELECT name FROM t ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// A committed row survives SIGKILL; an uncommitted one does not.
func TestKillRestartKeepsCommittedRows(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Start(t)
	if !strings.HasPrefix(srv.Addr(), "127.0.0.1:") {
		t.Fatalf("Addr() = %q, want a 127.0.0.1 address", srv.Addr())
	}
	dsn := srv.NewDatabase(t)
	db := srv.DB(t, dsn)
	mustExec(t, db, "CREATE TABLE t (name text PRIMARY KEY)")
	mustExec(t, db, "INSERT INTO t VALUES ('committed')")
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO t VALUES ('uncommitted')"); err != nil {
		t.Fatal(err)
	}
	var backend int
	if err := tx.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		t.Fatal(err)
	}

	srv.Kill(t)
	// The backends die with the postmaster, as in a crash.
	waitGone(t, backend)
	if err := tx.Commit(); err == nil {
		t.Fatal("COMMIT after Kill succeeded")
	}
	if err := db.PingContext(ctx); err == nil {
		t.Fatal("ping after Kill succeeded")
	}
	srv.Kill(t) // killing a dead server does nothing

	srv.Restart(t)
	db = srv.DB(t, dsn) // the old pool's connections are dead
	if got := names(t, db); strings.Join(got, ",") != "committed" {
		t.Fatalf("rows after kill -9 and restart = %q, want [committed]", got)
	}

	mustExec(t, db, "INSERT INTO t VALUES ('before stop')")
	srv.Stop(t)
	srv.Stop(t)
	srv.Restart(t)
	db = srv.DB(t, dsn)
	if got := names(t, db); strings.Join(got, ",") != "before stop,committed" {
		t.Fatalf("rows after stop and restart = %q", got)
	}
}

// waitGone waits until process pid has exited.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if errors.Is(err, os.ErrNotExist) && syscall.Kill(pid, 0) == syscall.ESRCH {
			return
		}
		if s := string(b); err == nil && strings.HasPrefix(s[strings.LastIndexByte(s, ')')+1:], " Z") {
			return // a zombie: dead
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running: %s", pid, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The settings that make kill -9 safe, and no network but 127.0.0.1.
func TestServerSettings(t *testing.T) {
	srv := pgtest.Shared(t)
	db := srv.DB(t, srv.DSN())
	for name, want := range map[string]string{
		"fsync":                   "on",
		"synchronous_commit":      "on",
		"full_page_writes":        "on",
		"listen_addresses":        "127.0.0.1",
		"unix_socket_directories": srv.Dir(),
		"port":                    srv.Addr()[len("127.0.0.1:"):],
		"server_encoding":         "UTF8",
	} {
		var got string
		if err := db.QueryRow("SELECT current_setting($1)", name).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	var version int
	if err := db.QueryRow("SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version < 150000 {
		t.Errorf("server_version_num = %d, want PostgreSQL 15 or later", version)
	}
	// Run as root, the server is the postgres user's.
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(srv.Dir(), "data", "PG_VERSION"))
		if err != nil {
			t.Fatal(err)
		}
		if uid := fi.Sys().(*syscall.Stat_t).Uid; strconv.Itoa(int(uid)) != u.Uid {
			t.Errorf("data owned by uid %d, want postgres (%s)", uid, u.Uid)
		}
	}
}

// Two databases of one server do not see each other's tables.
func TestDatabasesAreIsolated(t *testing.T) {
	srv := pgtest.Shared(t)
	dsn1, dsn2 := srv.NewDatabase(t), srv.NewDatabase(t)
	if dsn1 == dsn2 {
		t.Fatalf("NewDatabase returned %s twice", dsn1)
	}
	db1, db2 := srv.DB(t, dsn1), srv.DB(t, dsn2)
	mustExec(t, db1, "CREATE TABLE t (name text)")
	mustExec(t, db1, "INSERT INTO t VALUES ('one')")
	if _, err := db2.Exec("SELECT * FROM t"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("reading db1's table from db2: err = %v, want does not exist", err)
	}
	mustExec(t, db2, "CREATE TABLE t (name text)")
	mustExec(t, db2, "INSERT INTO t VALUES ('two')")
	if got := names(t, db1); strings.Join(got, ",") != "one" {
		t.Errorf("db1 holds %q", got)
	}
	if got := names(t, db2); strings.Join(got, ",") != "two" {
		t.Errorf("db2 holds %q", got)
	}
}

// Tests share one server; a test's own server is another, on another port.
func TestSharedAndOwnServersCoexist(t *testing.T) {
	shared := pgtest.Shared(t)
	if again := pgtest.Shared(t); again != shared {
		t.Fatal("Shared started a second server")
	}
	own := pgtest.Start(t)
	if own.Addr() == shared.Addr() || own.Dir() == shared.Dir() {
		t.Fatalf("own server %v and shared server %v share an address or directory", own, shared)
	}
	ownDSN := own.NewDatabase(t)
	sdb, odb := shared.DB(t, shared.NewDatabase(t)), own.DB(t, ownDSN)
	mustExec(t, sdb, "CREATE TABLE t (name text)")
	mustExec(t, odb, "CREATE TABLE t (name text)")
	mustExec(t, sdb, "INSERT INTO t VALUES ('shared')")
	mustExec(t, odb, "INSERT INTO t VALUES ('own')")
	own.Kill(t)
	if got := names(t, sdb); strings.Join(got, ",") != "shared" {
		t.Fatalf("shared server holds %q after the own one was killed", got)
	}
	own.Restart(t)
	if got := names(t, own.DB(t, ownDSN)); strings.Join(got, ",") != "own" {
		t.Fatalf("own server holds %q after restart", got)
	}
}

// Many tests at once on the shared server, each in a database of its own.
func TestParallelDatabases(t *testing.T) {
	for i := range 4 {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			srv := pgtest.Shared(t)
			db := srv.DB(t, srv.NewDatabase(t))
			mustExec(t, db, "CREATE TABLE t (name text)")
			mustExec(t, db, "INSERT INTO t VALUES ($1)", strconv.Itoa(i))
			if got := names(t, db); strings.Join(got, ",") != strconv.Itoa(i) {
				t.Errorf("database of subtest %d holds %q", i, got)
			}
		})
	}
}

// A test's server is gone when it ends, and its databases are dropped. A
// server killed and never restarted leaves no shared memory behind.
func TestCleanup(t *testing.T) {
	var own *pgtest.Server
	var dsn string
	shmid := -1
	t.Run("inner", func(t *testing.T) {
		own = pgtest.Start(t)
		dsn = pgtest.Shared(t).NewDatabase(t)
		killed := pgtest.Start(t)
		pid, err := os.ReadFile(filepath.Join(killed.Dir(), "data", "postmaster.pid"))
		if err != nil {
			t.Fatal(err)
		}
		// The seventh line is the segment's "key id".
		if lines := strings.Split(string(pid), "\n"); len(lines) > 6 {
			if f := strings.Fields(lines[6]); len(f) == 2 {
				shmid, _ = strconv.Atoi(f[1])
			}
		}
		killed.Kill(t)
	})
	if shmid < 0 {
		t.Error("no shared memory segment in postmaster.pid")
	} else if _, err := unix.SysvShmCtl(shmid, unix.IPC_STAT, &unix.SysvShmDesc{}); err == nil {
		t.Errorf("shared memory segment %d of a killed server is still there", shmid)
	}
	if conn, err := net.Dial("tcp", own.Addr()); err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after the test that started it ended", own.Addr())
	}
	if _, err := os.Stat(own.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("server directory %s still there: %v", own.Dir(), err)
	}
	name := dsn[strings.LastIndex(dsn, "/")+1 : strings.Index(dsn, "?")]
	srv := pgtest.Shared(t)
	var n int
	if err := srv.DB(t, srv.DSN()).QueryRow("SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("database %s still exists after the test that made it ended", name)
	}
}

// fatalTB records Fatalf instead of failing the real test.
type fatalTB struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.msg = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

// The shared server cannot be killed, stopped or restarted by one test.
func TestSharedServerRefusesKill(t *testing.T) {
	srv := pgtest.Shared(t)
	for name, f := range map[string]func(testing.TB){"Kill": srv.Kill, "Stop": srv.Stop, "Restart": srv.Restart} {
		tb := &fatalTB{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			f(tb)
		}()
		<-done
		if !strings.Contains(tb.msg, name+" on the shared server") {
			t.Errorf("%s on the shared server: Fatalf(%q)", name, tb.msg)
		}
	}
	if err := srv.DB(t, srv.DSN()).Ping(); err != nil {
		t.Fatalf("shared server down after refused Kill: %v", err)
	}
}

// A standby streams the primary's commits; disconnected, it misses those
// after; promoted, it accepts writes, and a DSN naming both servers finds
// the one that does.
func TestStandby(t *testing.T) {
	ctx := t.Context()
	primary := pgtest.StartPrimary(t)
	standby := pgtest.StartStandby(t, primary)
	pdb := primary.DB(t, primary.DSN())
	mustExec(t, pdb, `CREATE TABLE t (n int)`)
	mustExec(t, pdb, `INSERT INTO t VALUES (1)`)
	sdb := standby.DB(t, standby.DSN())
	waitRows := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			var n int
			if err := sdb.QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n); err == nil && n == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the standby never had %d rows", want)
			}
		}
	}
	waitRows(1)
	standby.Disconnect(t)
	mustExec(t, pdb, `INSERT INTO t VALUES (2)`)
	primary.Kill(t)
	standby.Promote(t)
	multi := primary.DB(t, pgtest.MultiHostDSN("postgres", primary, standby))
	mustExec(t, multi, `INSERT INTO t VALUES (3)`)
	var n int
	if err := sdb.QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("the promoted standby has %d rows (%v); want 2: the row committed after it was cut off is lost", n, err)
	}
}

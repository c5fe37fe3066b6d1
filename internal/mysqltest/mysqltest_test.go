package mysqltest_test

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

	"github.com/go-sql-driver/mysql"

	"github.com/sngen/sn/internal/mysqltest"
)

func TestMain(m *testing.M) { mysqltest.Main(m) }

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
	srv := mysqltest.Start(t)
	if !strings.HasPrefix(srv.Addr(), "127.0.0.1:") {
		t.Fatalf("Addr() = %q, want a 127.0.0.1 address", srv.Addr())
	}
	db := srv.DB(t, srv.NewDatabase(t))
	mustExec(t, db, "CREATE TABLE t (name varchar(20) PRIMARY KEY) ENGINE=InnoDB")
	mustExec(t, db, "INSERT INTO t VALUES ('committed')")
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO t VALUES ('uncommitted')"); err != nil {
		t.Fatal(err)
	}

	srv.Kill(t)
	if err := tx.Commit(); err == nil {
		t.Fatal("COMMIT after Kill succeeded")
	}
	if err := db.PingContext(ctx); err == nil {
		t.Fatal("ping after Kill succeeded")
	}
	srv.Kill(t) // killing a dead server does nothing

	srv.Restart(t)
	// The same pool works again: the driver drops dead connections.
	if got := names(t, db); strings.Join(got, ",") != "committed" {
		t.Fatalf("rows after kill -9 and restart = %q, want [committed]", got)
	}

	mustExec(t, db, "INSERT INTO t VALUES ('before stop')")
	srv.Stop(t)
	srv.Stop(t)
	srv.Restart(t)
	if got := names(t, db); strings.Join(got, ",") != "before stop,committed" {
		t.Fatalf("rows after stop and restart = %q", got)
	}
}

// The settings that make kill -9 safe, no network but 127.0.0.1, and
// passwords checked.
func TestServerSettings(t *testing.T) {
	srv := mysqltest.Shared(t)
	db := srv.DB(t, srv.DSN())
	for name, want := range map[string]string{
		"innodb_flush_log_at_trx_commit": "1",
		"bind_address":                   "127.0.0.1",
		"port":                           srv.Addr()[len("127.0.0.1:"):],
		"socket":                         filepath.Join(srv.Dir(), "mysqld.sock"),
		"log_bin":                        "OFF",
		"character_set_server":           "utf8mb4",
		"database":                       "test",
	} {
		var got string
		if err := db.QueryRow("SELECT CAST(@@" + name + " AS CHAR)").Scan(&got); err != nil && name != "database" {
			t.Fatal(err)
		}
		if name == "database" {
			if err := db.QueryRow("SELECT DATABASE()").Scan(&got); err != nil {
				t.Fatal(err)
			}
		}
		if got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	var version string
	if err := db.QueryRow("SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(version, "MariaDB") {
		t.Errorf("VERSION() = %q, want MariaDB", version)
	}

	cfg, err := mysql.ParseDSN(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Passwd = "wrong"
	bad, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	var merr *mysql.MySQLError
	if err := bad.Ping(); !errors.As(err, &merr) || merr.Number != 1045 {
		t.Errorf("ping with a wrong password: %v, want error 1045 (access denied)", err)
	}

	// Run as root, the server is the mysql user's.
	if os.Geteuid() == 0 {
		u, err := user.Lookup("mysql")
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(srv.Dir(), "data", "ibdata1"))
		if err != nil {
			t.Fatal(err)
		}
		if uid := fi.Sys().(*syscall.Stat_t).Uid; strconv.Itoa(int(uid)) != u.Uid {
			t.Errorf("data owned by uid %d, want mysql (%s)", uid, u.Uid)
		}
	}
}

// The account can manage users: the grant tables are on.
func TestCreateAndDropUser(t *testing.T) {
	srv := mysqltest.Shared(t)
	dsn := srv.NewDatabase(t)
	db := srv.DB(t, dsn)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	user := fmt.Sprintf("u%d", os.Getpid())
	mustExec(t, db, "CREATE USER '"+user+"'@'127.0.0.1' IDENTIFIED BY 'secret'")
	mustExec(t, db, "GRANT SELECT ON `"+cfg.DBName+"`.* TO '"+user+"'@'127.0.0.1'")
	cfg.User, cfg.Passwd = user, "secret"
	udb := srv.DB(t, cfg.FormatDSN())
	if err := udb.Ping(); err != nil {
		t.Fatalf("the new user cannot connect: %v", err)
	}
	if _, err := udb.Exec("CREATE TABLE x (id int)"); err == nil {
		t.Error("a user with SELECT only created a table")
	}
	udb.Close()
	mustExec(t, db, "DROP USER '"+user+"'@'127.0.0.1'")
}

// Two databases of one server do not see each other's tables.
func TestDatabasesAreIsolated(t *testing.T) {
	srv := mysqltest.Shared(t)
	dsn1, dsn2 := srv.NewDatabase(t), srv.NewDatabase(t)
	if dsn1 == dsn2 {
		t.Fatalf("NewDatabase returned %s twice", dsn1)
	}
	db1, db2 := srv.DB(t, dsn1), srv.DB(t, dsn2)
	mustExec(t, db1, "CREATE TABLE t (name varchar(20))")
	mustExec(t, db1, "INSERT INTO t VALUES ('one')")
	var merr *mysql.MySQLError
	if _, err := db2.Exec("SELECT * FROM t"); !errors.As(err, &merr) || merr.Number != 1146 {
		t.Fatalf("reading db1's table from db2: err = %v, want error 1146 (no such table)", err)
	}
	mustExec(t, db2, "CREATE TABLE t (name varchar(20))")
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
	shared := mysqltest.Shared(t)
	if again := mysqltest.Shared(t); again != shared {
		t.Fatal("Shared started a second server")
	}
	own := mysqltest.Start(t)
	if own.Addr() == shared.Addr() || own.Dir() == shared.Dir() {
		t.Fatalf("own server %v and shared server %v share an address or directory", own, shared)
	}
	sdb, odb := shared.DB(t, shared.NewDatabase(t)), own.DB(t, own.NewDatabase(t))
	mustExec(t, sdb, "CREATE TABLE t (name varchar(20))")
	mustExec(t, odb, "CREATE TABLE t (name varchar(20))")
	mustExec(t, sdb, "INSERT INTO t VALUES ('shared')")
	mustExec(t, odb, "INSERT INTO t VALUES ('own')")
	own.Kill(t)
	if got := names(t, sdb); strings.Join(got, ",") != "shared" {
		t.Fatalf("shared server holds %q after the own one was killed", got)
	}
	own.Restart(t)
	if got := names(t, odb); strings.Join(got, ",") != "own" {
		t.Fatalf("own server holds %q after restart", got)
	}
}

// Many tests at once on the shared server, each in a database of its own.
func TestParallelDatabases(t *testing.T) {
	for i := range 4 {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			srv := mysqltest.Shared(t)
			db := srv.DB(t, srv.NewDatabase(t))
			mustExec(t, db, "CREATE TABLE t (name varchar(20))")
			mustExec(t, db, "INSERT INTO t VALUES (?)", strconv.Itoa(i))
			if got := names(t, db); strings.Join(got, ",") != strconv.Itoa(i) {
				t.Errorf("database of subtest %d holds %q", i, got)
			}
		})
	}
}

// A test's server is gone when it ends, and its databases are dropped even
// when a connection still uses them.
func TestCleanup(t *testing.T) {
	var own *mysqltest.Server
	var dsn string
	var leaked *sql.DB
	t.Run("inner", func(t *testing.T) {
		own = mysqltest.Start(t)
		dsn = mysqltest.Shared(t).NewDatabase(t)
		var err error
		if leaked, err = sql.Open("mysql", dsn); err != nil {
			t.Fatal(err)
		}
		if err := leaked.Ping(); err != nil {
			t.Fatal(err)
		}
	})
	defer leaked.Close()
	if conn, err := net.Dial("tcp", own.Addr()); err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after the test that started it ended", own.Addr())
	}
	if _, err := os.Stat(own.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("server directory %s still there: %v", own.Dir(), err)
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	srv := mysqltest.Shared(t)
	var n int
	if err := srv.DB(t, srv.DSN()).QueryRow("SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?", cfg.DBName).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("database %s still exists after the test that made it ended", cfg.DBName)
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
	srv := mysqltest.Shared(t)
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

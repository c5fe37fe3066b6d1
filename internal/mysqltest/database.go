package mysqltest

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sngen/sn/internal/testserver"
)

// dbSeq numbers the databases made by NewDatabase in this test binary.
var dbSeq atomic.Int64

// DSN returns the go-sql-driver/mysql DSN of the server's empty "test"
// database, such as mysqltest:mysqltest@tcp(127.0.0.1:3306)/test?parseTime=true.
func (s *Server) DSN() string { return s.config(defaultDatabase).FormatDSN() }

func (s *Server) config(database string) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = dbUser, password
	cfg.Net, cfg.Addr = "tcp", s.Addr()
	cfg.DBName = database
	cfg.ParseTime = true
	return cfg
}

// NewDatabase creates an empty database for the test, named after it, and
// returns its DSN (like [Server.DSN]). The database is dropped when the test
// ends, the connections using it killed first, unless the server is down
// by then. NewDatabase calls tb.Fatalf when the database cannot be created.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name := testserver.DatabaseName(tb.Name(), dbSeq.Add(1), 64) // MariaDB's 64 characters
	if err := s.admin(func(ctx context.Context, db *sql.DB) error {
		_, err := db.ExecContext(ctx, "CREATE DATABASE "+quote(name))
		return err
	}); err != nil {
		tb.Fatalf("mysqltest: creating database %s on %s: %v", name, s.Addr(), err)
	}
	tb.Cleanup(func() {
		if !s.Running() {
			return
		}
		if err := s.admin(func(ctx context.Context, db *sql.DB) error { return drop(ctx, db, name) }); err != nil {
			tb.Errorf("mysqltest: dropping database %s on %s: %v", name, s.Addr(), err)
		}
	})
	return s.config(name).FormatDSN()
}

// drop kills the connections using the database name, then drops it.
func drop(ctx context.Context, db *sql.DB, name string) error {
	rows, err := db.QueryContext(ctx,
		"SELECT id FROM information_schema.processlist WHERE db = ? AND id <> CONNECTION_ID()", name)
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		// It may have gone in the meantime.
		db.ExecContext(ctx, "KILL CONNECTION "+strconv.FormatInt(id, 10))
	}
	_, err = db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+quote(name))
	return err
}

// admin runs f with a one-connection pool of the server's account.
func (s *Server) admin(f func(context.Context, *sql.DB) error) error {
	cfg := s.config("")
	// Give up instead of waiting a day for a lock held by a stuck test.
	cfg.Params = map[string]string{"lock_wait_timeout": "30"}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return f(ctx, db)
}

// quote quotes an SQL identifier.
func quote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// DB opens dsn with the github.com/go-sql-driver/mysql driver and closes it
// when the test ends. dsn is usually [Server.DSN] or one returned by
// [Server.NewDatabase]. The driver's own messages, such as those about the
// dead connections of a killed server, go to the test's log.
func (s *Server) DB(tb testing.TB, dsn string) *sql.DB {
	tb.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		tb.Fatalf("mysqltest: %v", err)
	}
	cfg.Logger = testLogger{tb}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		tb.Fatalf("mysqltest: opening %s: %v", dsn, err)
	}
	db := sql.OpenDB(conn)
	tb.Cleanup(func() { db.Close() })
	return db
}

// testLogger writes the driver's messages to a test's log.
type testLogger struct{ tb testing.TB }

func (l testLogger) Print(v ...any) {
	l.tb.Helper()
	l.tb.Log(append([]any{"mysql driver:"}, v...)...)
}

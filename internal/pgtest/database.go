package pgtest

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn/internal/testserver"
)

// dbSeq numbers the databases made by NewDatabase in this test binary.
var dbSeq atomic.Int64

// DSN returns the URL of the server's "postgres" database for its
// superuser, such as postgres://pgtest:pgtest@127.0.0.1:5432/postgres?sslmode=disable.
// pgx and libpq both accept it.
func (s *Server) DSN() string { return s.dsn("postgres") }

func (s *Server) dsn(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(superuser, password),
		Host:     s.Addr(),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// NewDatabase creates an empty database for the test, named after it, and
// returns its DSN (like [Server.DSN]). The database is dropped when the test
// ends, its connections closed first, unless the server is down by then.
// NewDatabase calls tb.Fatalf when the database cannot be created.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name := testserver.DatabaseName(tb.Name(), dbSeq.Add(1), 63) // PostgreSQL's 63 bytes
	if err := s.exec("CREATE DATABASE " + quote(name)); err != nil {
		tb.Fatalf("pgtest: creating database %s on %s: %v", name, s.Addr(), err)
	}
	tb.Cleanup(func() {
		if !s.Running() {
			return
		}
		if err := s.exec("DROP DATABASE IF EXISTS " + quote(name) + " WITH (FORCE)"); err != nil {
			tb.Errorf("pgtest: dropping database %s on %s: %v", name, s.Addr(), err)
		}
	})
	return s.dsn(name)
}

// exec runs one statement as the superuser in the "postgres" database.
func (s *Server) exec(stmt string) error {
	db, err := sql.Open("pgx", s.DSN())
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = db.ExecContext(ctx, stmt)
	return err
}

// quote quotes an SQL identifier.
func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// DB opens dsn with the pgx driver (github.com/jackc/pgx/v5/stdlib) and
// closes it when the test ends. dsn is usually [Server.DSN] or one returned
// by [Server.NewDatabase].
func (s *Server) DB(tb testing.TB, dsn string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		tb.Fatalf("pgtest: opening %s: %v", dsn, err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

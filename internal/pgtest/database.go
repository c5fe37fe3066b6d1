package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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
	name := databaseName(tb.Name(), dbSeq.Add(1))
	if err := s.exec("CREATE DATABASE " + quote(name)); err != nil {
		tb.Fatalf("pgtest: creating database %s on %s: %v", name, s.Addr(), err)
	}
	tb.Cleanup(func() {
		if !s.running() {
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

// databaseName makes a database name from a test's name and a number that
// keeps it unique: "t_" and the lower-case name with runs of other
// characters than letters and digits made "_", cut to fit PostgreSQL's 63
// bytes, then "_" and the number.
func databaseName(test string, n int64) string {
	var b strings.Builder
	b.WriteString("t_")
	under := true
	for _, r := range strings.ToLower(test) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
	}
	suffix := strconv.FormatInt(n, 10)
	name := strings.TrimSuffix(b.String(), "_")
	if max := 63 - len(suffix) - 1; len(name) > max {
		name = name[:max]
	}
	return name + "_" + suffix
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

// String returns a description of the server for test logs.
func (s *Server) String() string { return fmt.Sprintf("PostgreSQL on %s (%s)", s.Addr(), s.dir) }

package sql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/snowflake"
	"github.com/sngen/sn/sequence/sqlseq"
)

// ledgerFields are the fields beside ledger that a SQL ledger reads.
var ledgerFields = []string{"table", "replication"}

// forms shows the URLs of a SQL ledger, for error messages.
const forms = "postgres://user:password@host:5432/db or mysql://user:password@host:3306/db"

// ledger is a ledger URL, read.
type ledger struct {
	drivers []string       // the database/sql drivers that open it, the first linked one used
	dsn     string         // what the driver opens
	dialect sqlseq.Dialect // the SQL sqlseq speaks to it
	shown   string         // the URL without its password, for messages and IDs
}

// pgDrivers are the database/sql drivers of PostgreSQL that take a URL:
// pgx's stdlib, and lib/pq.
var pgDrivers = []string{"pgx", "postgres"}

// parse reads a ledger URL: postgres:// and postgresql:// URLs go to the
// driver unchanged; a mysql:// URL becomes a go-sql-driver/mysql DSN.
func parse(raw string) (ledger, error) {
	l := ledger{shown: config.Redact(raw)}
	scheme, _, ok := strings.Cut(raw, "://")
	if !ok {
		return l, fmt.Errorf("want a URL such as %s", forms)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return l, config.URLSyntax(raw, err)
	}
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
		l.drivers, l.dsn, l.dialect = pgDrivers, raw, sqlseq.Postgres
	case "mysql":
		dsn, err := mysqlDSN(u)
		if err != nil {
			return l, err
		}
		l.drivers, l.dsn, l.dialect = []string{"mysql"}, dsn, sqlseq.MySQL
	default:
		return l, fmt.Errorf("unknown scheme %q (want postgres, postgresql or mysql: %s)", scheme, forms)
	}
	return l, nil
}

// isEtcd reports whether raw is an etcd ledger's URL.
func isEtcd(raw string) bool {
	scheme, _, _ := strings.Cut(strings.ToLower(raw), "://")
	return scheme == "etcd" || scheme == "etcds"
}

// mysqlDSN turns mysql://user:password@host[:port]/db[?param=value...]
// into the DSN of go-sql-driver/mysql,
// user:password@tcp(host:port)/db?parseTime=true&param=value, written
// here so that this package does not link the driver. The port defaults
// to 3306. The driver finds the password between the first ":" and the
// last "@" before the last "/", so a password may hold any byte; a user
// may hold neither ":" nor "@".
func mysqlDSN(u *url.URL) (string, error) {
	if u.Hostname() == "" {
		return "", errors.New("want a host, as in mysql://user:password@host:3306/db")
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" || strings.ContainsAny(db, "/?") {
		return "", errors.New("want a database name, as in mysql://user:password@host:3306/db")
	}
	var b strings.Builder
	if u.User != nil {
		user := u.User.Username()
		if strings.ContainsAny(user, ":@") {
			return "", errors.New(`a MySQL user name cannot hold ":" or "@"`)
		}
		b.WriteString(user)
		if pw, ok := u.User.Password(); ok {
			b.WriteString(":" + pw)
		}
		b.WriteString("@")
	}
	port := u.Port()
	if port == "" {
		port = "3306"
	}
	q := u.Query()
	if v := q.Get("parseTime"); v != "" {
		if _, err := strconv.ParseBool(v); err != nil {
			return "", fmt.Errorf("invalid bool value: %s", v)
		}
	}
	q.Set("parseTime", "true") // sqlseq reads times as time.Time
	fmt.Fprintf(&b, "tcp(%s)/%s?%s", net.JoinHostPort(u.Hostname(), port), db, q.Encode())
	return b.String(), nil
}

// tableOf returns the ledger table f names.
func tableOf(f fields) string {
	if f.Table == "" {
		return sqlseq.DefaultTable
	}
	return f.Table
}

// ledgerDriver is the ledger driver of postgres://, postgresql:// and
// mysql:// URLs.
type ledgerDriver struct{}

// CheckLedger checks the URL, the table and the replication, and that a
// database/sql driver for the database is linked.
func (ledgerDriver) CheckLedger(t *config.Target, raw string) (config.LedgerInfo, error) {
	info := config.LedgerInfo{Fields: ledgerFields}
	var f fields
	if err := t.Decode(&f); err != nil {
		return info, err
	}
	l, err := parse(raw)
	if err != nil {
		return info, &config.Error{Field: "ledger", Err: fmt.Errorf("ledger %q: %w", l.shown, err)}
	}
	return check(t, f, l)
}

// check checks f's table and replication for the ledger l, and that a
// database/sql driver for it is linked.
func check(t *config.Target, f fields, l ledger) (config.LedgerInfo, error) {
	info := config.LedgerInfo{Fields: ledgerFields}
	var errs []error
	if name, err := linked(l); err != nil {
		errs = append(errs, &config.Error{Field: "ledger", Err: fmt.Errorf("ledger %q: %w", l.shown, err)})
	} else if db, err := sql.Open(name, l.dsn); err != nil {
		// The driver reads the DSN here, and connects to nothing.
		errs = append(errs, &config.Error{Field: "ledger", Err: fmt.Errorf("ledger %q: %w", l.shown, err)})
	} else {
		db.Close()
	}
	switch r := sqlseq.Replication(f.Replication); r {
	case sqlseq.RequireSync, sqlseq.SingleServer, sqlseq.AcceptAsyncLoss:
	default:
		errs = append(errs, &config.Error{Field: "replication", Err: fmt.Errorf("replication %q: want %s or %s (or nothing: refuse a standby that is not synchronous)", r, sqlseq.SingleServer, sqlseq.AcceptAsyncLoss)})
	}
	// New checks its arguments and nothing else: it never uses the DB.
	if _, err := sqlseq.New(new(sql.DB), l.dialect, sqlseq.Options{Table: tableOf(f)}); err != nil {
		if errors.Is(err, sequence.ErrInvalidArgument) {
			err = errors.New(`want a name such as sn_ledger or billing.sn_ledger (letters, digits and "_")`)
		}
		errs = append(errs, &config.Error{Field: "table", Err: fmt.Errorf("table %q: %w", f.Table, err)})
	}
	info.ID = fmt.Sprintf("ledger %s table %s", l.shown, tableOf(f))
	return info, errors.Join(errs...)
}

// linked returns the first of l's database/sql drivers that the program
// links, or an error that says which to import.
func linked(l ledger) (string, error) {
	have := sql.Drivers()
	for _, d := range l.drivers {
		if slices.Contains(have, d) {
			return d, nil
		}
	}
	if l.dialect == sqlseq.MySQL {
		return "", fmt.Errorf("no database/sql driver for MySQL is linked: import _ %q", "github.com/go-sql-driver/mysql")
	}
	return "", fmt.Errorf("no database/sql driver for PostgreSQL is linked: import _ %q", "github.com/jackc/pgx/v5/stdlib")
}

// OpenLedger opens the ledger, or shares the one the Build has open.
func (ledgerDriver) OpenLedger(ctx context.Context, t *config.Target, raw string) (config.Ledger, error) {
	st, err := open(ctx, t, raw)
	if err != nil {
		return nil, err
	}
	return store{st}, nil
}

// store is a SQL ledger as a config.Ledger.
type store struct{ *sqlseq.Store }

// Leaser leases snowflake worker ids in the ledger's database
// (sqlseq.NewLeaser).
func (s store) Leaser() (snowflake.Leaser, error) {
	return sqlseq.NewLeaser(s.Store, sqlseq.LeaserOptions{})
}

// open opens the SQL ledger at raw for t: one *sql.DB per DSN and one
// sqlseq.Store per table in a Build. The table is created (Migrate), and
// the replication checked, when the Build first opens it, within the
// fetch timeout.
func open(ctx context.Context, t *config.Target, raw string) (*sqlseq.Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var f fields
	t.Decode(&f) // Check accepted it
	l, err := parse(raw)
	if err != nil {
		return nil, fmt.Errorf("backend/sql: ledger %s: %w", l.shown, err)
	}
	name, err := linked(l)
	if err != nil {
		return nil, fmt.Errorf("backend/sql: ledger %s: %w", l.shown, err)
	}
	db, err := config.Share(t, "sql "+l.dsn, func() (*sql.DB, error) {
		db, err := sql.Open(name, l.dsn)
		if err != nil {
			return nil, fmt.Errorf("backend/sql: ledger %s: %w", l.shown, err)
		}
		return db, nil
	})
	if err != nil {
		return nil, err
	}
	table := tableOf(f)
	return config.Share(t, "sqlseq "+l.dsn+" table "+table+" replication "+f.Replication, func() (*sqlseq.Store, error) {
		st, err := sqlseq.New(db, l.dialect, sqlseq.Options{Table: table, Replication: sqlseq.Replication(f.Replication)})
		if err != nil {
			return nil, err
		}
		timeout := t.FetchTimeout()
		mctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		err = st.Migrate(mctx)
		if err == nil {
			err = st.CheckReplication(mctx)
		}
		if err != nil {
			if mctx.Err() != nil && ctx.Err() == nil {
				err = fmt.Errorf("no answer within %v: %w", timeout, err)
			}
			return nil, fmt.Errorf("backend/sql: ledger %s: %w", l.shown, err)
		}
		return st, nil
	})
}

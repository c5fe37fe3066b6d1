package backend

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/sqlseq"
)

// ledgerFields are the fields of a config.Sequence that name a ledger.
var ledgerFields = []string{"ledger", "table", "replication"}

// ledgerForms shows the URLs a ledger takes, for error messages.
const ledgerForms = "postgres://user:password@host:5432/db, mysql://user:password@host:3306/db or etcd://host1:2379,host2:2379,host3:2379"

// ledger is a ledger URL, read.
type ledger struct {
	driver  string         // the database/sql driver: "pgx" or "mysql"
	dsn     string         // what the driver opens
	dialect sqlseq.Dialect // the SQL sqlseq speaks to it
	etcd    *etcdLedger    // an etcd cluster instead of a database
	shown   string         // the URL without its password, for messages and IDs
}

// parseLedger reads a ledger URL: postgres:// and postgresql:// URLs go to
// pgx unchanged; a mysql:// URL becomes a go-sql-driver/mysql DSN,
// user:password@tcp(host:port)/db?parseTime=true, with the URL's query
// as the DSN's parameters.
func parseLedger(raw string) (ledger, error) {
	l := ledger{shown: redactLedger(raw)}
	scheme, _, ok := strings.Cut(raw, "://")
	if !ok {
		return l, fmt.Errorf("want a URL such as %s", ledgerForms)
	}
	if s := strings.ToLower(scheme); s == "etcd" || s == "etcds" {
		var err error
		l.etcd, err = parseEtcd(raw, s == "etcds")
		return l, err
	}
	u, err := url.Parse(raw)
	if err != nil {
		return l, urlSyntax(raw, err)
	}
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
		l.driver, l.dsn, l.dialect = "pgx", raw, sqlseq.Postgres
	case "mysql":
		dsn, err := mysqlDSN(u)
		if err != nil {
			return l, err
		}
		l.driver, l.dsn, l.dialect = "mysql", dsn, sqlseq.MySQL
	default:
		return l, fmt.Errorf("unknown scheme %q (want postgres, postgresql, mysql, etcd or etcds: %s)", scheme, ledgerForms)
	}
	return l, nil
}

// mysqlDSN turns mysql://user:password@host[:port]/db[?param=value...]
// into the DSN of go-sql-driver/mysql, with parseTime=true. The port
// defaults to 3306.
func mysqlDSN(u *url.URL) (string, error) {
	if u.Hostname() == "" {
		return "", errors.New("want a host, as in mysql://user:password@host:3306/db")
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" || strings.Contains(db, "/") {
		return "", errors.New("want a database name, as in mysql://user:password@host:3306/db")
	}
	// The driver reads the parameters; the rest is set field by field, so
	// that no character of the password or the name is read as syntax.
	params := "/"
	if q := u.Query(); len(q) > 0 {
		params += "?" + q.Encode()
	}
	cfg, err := mysql.ParseDSN(params)
	if err != nil {
		return "", err
	}
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	port := u.Port()
	if port == "" {
		port = "3306"
	}
	cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(u.Hostname(), port)
	cfg.DBName = db
	cfg.ParseTime = true
	return cfg.FormatDSN(), nil
}

// redactLedger hides the password of a ledger URL, in its user
// information or in a password parameter, and of a key=value DSN.
func redactLedger(raw string) string {
	if !strings.Contains(raw, "://") {
		return passwordParam.ReplaceAllString(raw, "${1}xxxxx")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return passwordParam.ReplaceAllString(redact(raw), "${1}xxxxx")
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// passwordParam matches a password given as a parameter.
var passwordParam = regexp.MustCompile(`(?i)(password=)[^\s&]*`)

// tableOf returns the ledger table of s.
func tableOf(s seq) string {
	if s.Table == "" {
		return sqlseq.DefaultTable
	}
	return s.Table
}

// checkLedger checks the ledger and table of s, for backend; required
// says whether backend needs a ledger.
func checkLedger(s seq, backend string, required bool) error {
	if s.Ledger == "" {
		switch {
		case required:
			return missing("ledger", backend, "a ledger, a database URL such as "+ledgerForms)
		case s.Table != "":
			return &config.Error{Field: "table", Err: fmt.Errorf("table %q names the ledger's table: set ledger too", s.Table)}
		}
		return nil
	}
	l, err := parseLedger(s.Ledger)
	if err != nil {
		return &config.Error{Field: "ledger", Err: fmt.Errorf("ledger %q: %w", l.shown, err)}
	}
	if l.etcd != nil && s.Replication != "" {
		return &config.Error{Field: "replication", Err: fmt.Errorf("replication %q is a SQL ledger's: an etcd ledger commits on a majority of members", s.Replication)}
	}
	if l.etcd != nil {
		if s.Table != "" {
			return &config.Error{Field: "table", Err: fmt.Errorf("table %q is a SQL ledger's: an etcd ledger's keys are under the URL's path (%s)", s.Table, l.etcd.prefix)}
		}
		return nil
	}
	switch r := sqlseq.Replication(s.Replication); r {
	case sqlseq.RequireSync, sqlseq.SingleServer, sqlseq.AcceptAsyncLoss:
	default:
		return &config.Error{Field: "replication", Err: fmt.Errorf("replication %q: want %s or %s (or nothing: refuse a standby that is not synchronous)", r, sqlseq.SingleServer, sqlseq.AcceptAsyncLoss)}
	}
	// New checks its arguments and nothing else: it never uses the DB.
	if _, err := sqlseq.New(new(sql.DB), l.dialect, sqlseq.Options{Table: tableOf(s)}); err != nil {
		if errors.Is(err, sequence.ErrInvalidArgument) {
			err = errors.New(`want a name such as sn_ledger or billing.sn_ledger (letters, digits and "_")`)
		}
		return &config.Error{Field: "table", Err: fmt.Errorf("table %q: %w", s.Table, err)}
	}
	return nil
}

// ledgerID is the part of a store ID that names the ledger of s, which
// checkLedger accepted.
func ledgerID(s seq) string {
	if l, err := parseLedger(s.Ledger); err == nil && l.etcd != nil {
		eps := slices.Sorted(slices.Values(l.etcd.endpoints)) // one cluster, whatever the order
		return fmt.Sprintf("ledger etcd %s prefix %s", strings.Join(eps, ","), l.etcd.prefix)
	}
	return fmt.Sprintf("ledger %s table %s", redactLedger(s.Ledger), tableOf(s))
}

// ledgerStore is a ledger, whatever keeps it: a *sqlseq.Store or an
// *etcdseq.Store.
type ledgerStore interface {
	sequence.Allocator
	sequence.Floorer
	StoreID(ctx context.Context) (string, error) // recorded by a Redis in front of it
	record.Holder
	sequence.Pinger
}

// openLedger opens the ledger of t, which checkLedger accepted: an etcd
// cluster (openEtcd), or a database, one *sql.DB per DSN and one
// sqlseq.Store per table in a Build. The table is created (Migrate) when
// the Build first opens it, within the fetch timeout.
func openLedger(ctx context.Context, t *config.Target) (ledgerStore, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, _ := decode(t) // Check accepted it
	l, err := parseLedger(s.Ledger)
	if err != nil {
		return nil, fmt.Errorf("backend: ledger %s: %w", l.shown, err)
	}
	if l.etcd != nil {
		return openEtcd(ctx, t, l)
	}
	return openSQL(ctx, t, s, l)
}

// openSQL opens the SQL ledger l of t.
func openSQL(ctx context.Context, t *config.Target, s seq, l ledger) (*sqlseq.Store, error) {
	db, err := config.Share(t, "sql "+l.dsn, func() (*sql.DB, error) {
		db, err := sql.Open(l.driver, l.dsn)
		if err != nil {
			return nil, fmt.Errorf("backend: ledger %s: %w", l.shown, err)
		}
		return db, nil
	})
	if err != nil {
		return nil, err
	}
	table := tableOf(s)
	return config.Share(t, "sqlseq "+l.dsn+" table "+table+" replication "+s.Replication, func() (*sqlseq.Store, error) {
		st, err := sqlseq.New(db, l.dialect, sqlseq.Options{Table: table, Replication: sqlseq.Replication(s.Replication)})
		if err != nil {
			return nil, err
		}
		timeout := fetchTimeout(s)
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
			return nil, fmt.Errorf("backend: ledger %s: %w", l.shown, err)
		}
		return st, nil
	})
}

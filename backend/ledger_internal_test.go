package backend

import (
	"slices"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/sngen/sn/sequence/sqlseq"
)

// A ledger URL becomes what its driver opens: a PostgreSQL URL as it is,
// a MySQL URL the DSN of go-sql-driver/mysql.
func TestParseLedger(t *testing.T) {
	tests := []struct {
		url     string
		driver  string
		dsn     string
		dialect sqlseq.Dialect
		shown   string
		passwd  string // the password the driver reads back from dsn
	}{
		{url: "postgres://u:pw@db:5432/orders?sslmode=disable", driver: "pgx", dsn: "postgres://u:pw@db:5432/orders?sslmode=disable",
			dialect: sqlseq.Postgres, shown: "postgres://u:xxxxx@db:5432/orders?sslmode=disable"},
		{url: "postgresql://db/orders", driver: "pgx", dsn: "postgresql://db/orders", dialect: sqlseq.Postgres, shown: "postgresql://db/orders"},
		{url: "mysql://u:pw@db:3307/orders", driver: "mysql", dsn: "u:pw@tcp(db:3307)/orders?parseTime=true",
			dialect: sqlseq.MySQL, shown: "mysql://u:xxxxx@db:3307/orders", passwd: "pw"},
		{url: "mysql://u@db/orders", driver: "mysql", dsn: "u@tcp(db:3306)/orders?parseTime=true", dialect: sqlseq.MySQL, shown: "mysql://u@db/orders"},
		{url: "MySQL://u:p%40ss%2Fw:rd@[::1]/orders?timeout=5s&tls=skip-verify", driver: "mysql",
			dsn: "u:p@ss/w:rd@tcp([::1]:3306)/orders?parseTime=true&timeout=5s&tls=skip-verify", dialect: sqlseq.MySQL,
			shown: "mysql://u:xxxxx@[::1]/orders?timeout=5s&tls=skip-verify", passwd: "p@ss/w:rd"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			l, err := parseLedger(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			if l.driver != tt.driver || l.dsn != tt.dsn || l.dialect != tt.dialect || l.shown != tt.shown {
				t.Errorf("parseLedger = %+v\nwant driver %s, dsn %s, dialect %s, shown %s", l, tt.driver, tt.dsn, tt.dialect, tt.shown)
			}
			if tt.driver != "mysql" {
				return
			}
			cfg, err := mysql.ParseDSN(l.dsn)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Passwd != tt.passwd || cfg.DBName != "orders" || !cfg.ParseTime || cfg.Net != "tcp" {
				t.Errorf("the driver reads password %q, database %q, parseTime %v, net %s", cfg.Passwd, cfg.DBName, cfg.ParseTime, cfg.Net)
			}
		})
	}
}

// A ledger URL that does not parse shows no piece of its password.
func TestParseLedgerSecret(t *testing.T) {
	for _, raw := range []string{
		"postgres://sn:S3c/retPW@db:5432/shop",
		"postgres://sn:S3c#retPW@db:5432/shop",
		"mysql://sn:S3c%zzretPW@db/shop",
	} {
		_, err := parseLedger(raw)
		if err == nil || strings.Contains(err.Error(), "S3c") || strings.Contains(err.Error(), "retPW") || !strings.Contains(err.Error(), "%2F") {
			t.Errorf("parseLedger(%q) = %v; want an error that shows no piece of the password and says how to write it", raw, err)
		}
	}
}

// etcd URLs: hosts are read one by one, IPv6 in brackets, a port 1 to
// 65535 (2379 by default), no member twice; the prefix is the path, with
// no part that could nest in another ledger's keys.
func TestParseEtcd(t *testing.T) {
	for _, tt := range []struct {
		raw       string
		endpoints []string
		prefix    string
		err       string
	}{
		{raw: "etcd://h1:2379,h2:2380,h3", endpoints: []string{"http://h1:2379", "http://h2:2380", "http://h3:2379"}, prefix: "sn/"},
		{raw: "etcds://u:p%40ss@h1/billing/", endpoints: []string{"https://h1:2379"}, prefix: "billing/"},
		{raw: "etcd://[::1]:2379,[::2]", endpoints: []string{"http://[::1]:2379", "http://[::2]:2379"}, prefix: "sn/"},
		{raw: "etcd://h1/a/b", endpoints: []string{"http://h1:2379"}, prefix: "a/b/"},
		{raw: "etcd://h1:abc,h2:2379", err: `port "abc" is not 1 to 65535`},
		{raw: "etcd://h1:0", err: `port "0" is not 1 to 65535`},
		{raw: "etcd://h1:2379:2380", err: "write an IPv6 address in brackets"},
		{raw: "etcd://::1", err: "write an IPv6 address in brackets"},
		{raw: "etcd://[::1", err: "without its ]"},
		{raw: "etcd://[h1]", err: "not an IPv6 address"},
		{raw: "etcd://h1,h1:2379", err: "given twice"},
		{raw: "etcd://,h1", err: "no host"},
		{raw: "etcd://h1/a/../b", err: `part ".."`},
		{raw: "etcd://h1/sn/n/", err: `part "n"`},
		{raw: "etcd://h1//", err: `part ""`},
	} {
		l, err := parseLedger(tt.raw)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseLedger(%q): %v; want an error saying %q", tt.raw, err, tt.err)
			}
		case err != nil:
			t.Errorf("parseLedger(%q): %v", tt.raw, err)
		case !slices.Equal(l.etcd.endpoints, tt.endpoints) || l.etcd.prefix != tt.prefix:
			t.Errorf("parseLedger(%q) = %q, prefix %q; want %q, %q", tt.raw, l.etcd.endpoints, l.etcd.prefix, tt.endpoints, tt.prefix)
		}
	}
	// One cluster is one store, whatever the order of its members.
	a := ledgerID(seq{Ledger: "etcd://h2,h1"})
	if b := ledgerID(seq{Ledger: "etcd://h1,h2"}); a != b {
		t.Errorf("two orders of one cluster: %q and %q", a, b)
	}
}

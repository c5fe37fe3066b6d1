package backend

import (
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

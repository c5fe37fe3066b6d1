package sql

import (
	"slices"
	"strings"
	"testing"

	"github.com/sngen/sn/sequence/sqlseq"
)

// The DSNs below are those go-sql-driver/mysql's FormatDSN wrote, and
// its ParseDSN read back with the password intact, when this package
// still linked the driver; the ledger tests of module tests open them.
// A ledger URL becomes what its driver opens: a PostgreSQL URL as it is,
// a MySQL URL the DSN of go-sql-driver/mysql.
func TestParseLedger(t *testing.T) {
	tests := []struct {
		url     string
		drivers []string
		dsn     string
		dialect sqlseq.Dialect
		shown   string
	}{
		{url: "postgres://u:pw@db:5432/orders?sslmode=disable", drivers: pgDrivers, dsn: "postgres://u:pw@db:5432/orders?sslmode=disable",
			dialect: sqlseq.Postgres, shown: "postgres://u:xxxxx@db:5432/orders?sslmode=disable"},
		{url: "postgresql://db/orders", drivers: pgDrivers, dsn: "postgresql://db/orders", dialect: sqlseq.Postgres, shown: "postgresql://db/orders"},
		{url: "mysql://u:pw@db:3307/orders", drivers: []string{"mysql"}, dsn: "u:pw@tcp(db:3307)/orders?parseTime=true",
			dialect: sqlseq.MySQL, shown: "mysql://u:xxxxx@db:3307/orders"},
		{url: "mysql://u@db/orders", drivers: []string{"mysql"}, dsn: "u@tcp(db:3306)/orders?parseTime=true", dialect: sqlseq.MySQL, shown: "mysql://u@db/orders"},
		{url: "MySQL://u:p%40ss%2Fw:rd@[::1]/orders?timeout=5s&tls=skip-verify", drivers: []string{"mysql"},
			dsn: "u:p@ss/w:rd@tcp([::1]:3306)/orders?parseTime=true&timeout=5s&tls=skip-verify", dialect: sqlseq.MySQL,
			shown: "mysql://u:xxxxx@[::1]/orders?timeout=5s&tls=skip-verify"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			l, err := parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(l.drivers, tt.drivers) || l.dsn != tt.dsn || l.dialect != tt.dialect || l.shown != tt.shown {
				t.Errorf("parse = %+v\nwant drivers %s, dsn %s, dialect %s, shown %s", l, tt.drivers, tt.dsn, tt.dialect, tt.shown)
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
		_, err := parse(raw)
		if err == nil || strings.Contains(err.Error(), "S3c") || strings.Contains(err.Error(), "retPW") || !strings.Contains(err.Error(), "%2F") {
			t.Errorf("parse(%q) = %v; want an error that shows no piece of the password and says how to write it", raw, err)
		}
	}
}

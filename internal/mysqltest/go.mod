module github.com/sngen/sn/internal/mysqltest

go 1.26.0

// The modules of this repository are used from this checkout (go.work
// joins them for development; a release requires their tags).
replace github.com/sngen/sn => ../..

require (
	github.com/go-sql-driver/mysql v1.10.1
	github.com/sngen/sn v0.0.0-00010101000000-000000000000
)

require filippo.io/edwards25519 v1.2.0 // indirect

module github.com/sngen/sn/internal/pgtest

go 1.26.0

// The modules of this repository are used from this checkout (go.work
// joins them for development; a release requires their tags).
replace github.com/sngen/sn => ../..

require (
	github.com/jackc/pgx/v5 v5.12.0
	github.com/sngen/sn v0.0.0-00010101000000-000000000000
	golang.org/x/sys v0.49.0
)

require (
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

module github.com/sngen/sn/sequence/redisseq

go 1.26.0

// The modules of this repository are used from this checkout (go.work
// joins them for development; a release requires their tags).
replace (
	github.com/sngen/sn => ../..
	github.com/sngen/sn/internal/pgtest => ../../internal/pgtest
	github.com/sngen/sn/internal/redistest => ../../internal/redistest
)

require (
	github.com/redis/go-redis/v9 v9.23.0
	github.com/sngen/sn v0.0.0-00010101000000-000000000000
	github.com/sngen/sn/internal/pgtest v0.0.0-00010101000000-000000000000
	github.com/sngen/sn/internal/redistest v0.0.0-00010101000000-000000000000
)

require (
	github.com/alecthomas/participle/v2 v2.1.4 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.12.0 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

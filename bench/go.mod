module github.com/sngen/sn/bench

go 1.26.0

// The modules of this repository are used from this checkout (go.work
// joins them for development; a release requires their tags).
replace (
	github.com/sngen/sn => ..
	github.com/sngen/sn/internal/pgtest => ../internal/pgtest
	github.com/sngen/sn/internal/redistest => ../internal/redistest
	github.com/sngen/sn/sequence/redisseq => ../sequence/redisseq
)

require (
	github.com/bwmarrin/snowflake v0.3.0
	github.com/redis/go-redis/v9 v9.23.0
	github.com/sngen/sn v0.0.0-00010101000000-000000000000
	github.com/sngen/sn/sequence/redisseq v0.0.0-00010101000000-000000000000
	github.com/sony/sonyflake/v2 v2.2.0
	go.etcd.io/bbolt v1.5.0
)

require (
	github.com/alecthomas/participle/v2 v2.1.4 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

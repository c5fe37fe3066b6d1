module github.com/sngen/sn/cmd/sn

go 1.26.0

// The modules of this repository are used from this checkout (go.work
// joins them for development; a release requires their tags).
replace (
	github.com/sngen/sn => ../..
	github.com/sngen/sn/backend/etcd => ../../backend/etcd
	github.com/sngen/sn/backend/redis => ../../backend/redis
	github.com/sngen/sn/backend/sqlite => ../../backend/sqlite
	github.com/sngen/sn/internal/etcdtest => ../../internal/etcdtest
	github.com/sngen/sn/internal/mysqltest => ../../internal/mysqltest
	github.com/sngen/sn/internal/pgtest => ../../internal/pgtest
	github.com/sngen/sn/internal/redistest => ../../internal/redistest
	github.com/sngen/sn/metrics => ../../metrics
	github.com/sngen/sn/sequence/etcdseq => ../../sequence/etcdseq
	github.com/sngen/sn/sequence/redisseq => ../../sequence/redisseq
	github.com/sngen/sn/sequence/sqliteseq => ../../sequence/sqliteseq
)

require (
	github.com/go-sql-driver/mysql v1.10.1
	github.com/google/go-cmp v0.7.0
	github.com/jackc/pgx/v5 v5.12.0
	github.com/prometheus/client_golang v1.25.0
	github.com/redis/go-redis/v9 v9.23.0
	github.com/sngen/sn v0.0.0-00010101000000-000000000000
	github.com/sngen/sn/backend/etcd v0.0.0-00010101000000-000000000000
	github.com/sngen/sn/backend/redis v0.0.0-00010101000000-000000000000
	github.com/sngen/sn/backend/sqlite v0.0.0-00010101000000-000000000000
	github.com/sngen/sn/internal/etcdtest v0.0.0-00010101000000-000000000000
	github.com/sngen/sn/internal/mysqltest v0.0.0-00010101000000-000000000000
	github.com/sngen/sn/internal/pgtest v0.0.0-00010101000000-000000000000
	github.com/sngen/sn/internal/redistest v0.0.0-00010101000000-000000000000
	github.com/sngen/sn/metrics v0.0.0-00010101000000-000000000000
	github.com/sngen/sn/sequence/redisseq v0.0.0-00010101000000-000000000000
	github.com/sngen/sn/sequence/sqliteseq v0.0.0-00010101000000-000000000000
	go.etcd.io/bbolt v1.5.0
)

require (
	filippo.io/edwards25519 v1.2.0 // indirect
	github.com/alecthomas/participle/v2 v2.1.4 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/coreos/go-semver v0.3.1 // indirect
	github.com/coreos/go-systemd/v22 v22.5.0 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.26.3 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/sngen/sn/sequence/etcdseq v0.0.0-00010101000000-000000000000 // indirect
	go.etcd.io/etcd/api/v3 v3.6.13 // indirect
	go.etcd.io/etcd/client/pkg/v3 v3.6.13 // indirect
	go.etcd.io/etcd/client/v3 v3.6.13 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/zap v1.27.0 // indirect
	golang.org/x/net v0.59.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20251202230838-ff82c1b0f217 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20251202230838-ff82c1b0f217 // indirect
	google.golang.org/grpc v1.79.3 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
	modernc.org/libc v1.80.1 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
	modernc.org/sqlite v1.62.0 // indirect
)

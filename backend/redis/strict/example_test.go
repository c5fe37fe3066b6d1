package strict_test

import (
	"fmt"

	_ "github.com/sngen/sn/backend/redis/strict"
	"github.com/sngen/sn/config"
)

// Machines that share a Redis share a ledger too: a redis-strict counter
// refilled from a file of one machine's is refused, unless single_host
// says that one host alone uses the Redis; a ledger whose driver is not
// imported says which package registers it.
func Example() {
	cfg, err := config.Decode([]byte(`
store: {backend: redis-strict, url: "redis://cache.internal:6379/0", path: sn.db}
templates:
  orders:  {template: "SN-@<seq, width=8>"}
  refunds: {template: "RF-@<seq, width=8>", sequence: {ledger: "postgres://sn:secret@db.internal/shop"}}
  tickets: {template: "QJ@<seq, width=6>", sequence: {single_host: true}}
`), "yaml")
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.Validate())
	// Output:
	// config: line 4: template "orders": sequence.path: path "sn.db": a file is one machine's, and behind a Redis that several machines share it repeats numbers once Redis loses its data: set ledger to a database every machine shares (postgres://user:password@host:5432/db, mysql://user:password@host:3306/db or etcd://host1:2379,host2:2379,host3:2379), or single_host: true if one host alone uses this Redis
	// config: line 5: template "refunds": sequence.ledger: ledger "postgres://sn:xxxxx@db.internal/shop": no ledger driver for postgres is linked: import _ "github.com/sngen/sn/backend/sql" and a PostgreSQL driver, _ "github.com/jackc/pgx/v5/stdlib"
}

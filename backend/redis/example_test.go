package redis_test

import (
	"fmt"

	_ "github.com/sngen/sn/backend/redis"
	"github.com/sngen/sn/config"
)

// A redis sequence in front of a ledger: the store is the Redis, its key
// prefix and the ledger, whose driver (here backend/sql, not imported)
// must be linked; the ledger's own fields (table) are accepted meanwhile,
// and the refusal names every import the ledger needs.
func Example() {
	cfg, err := config.Decode([]byte(`
templates:
  tickets: {template: "QJ@<seq>", sequence: {backend: redis, url: "redis://:secret@cache.internal:6379/0", prefix: "t:"}}
  orders:  {template: "SN-@<seq>", sequence: {backend: redis, url: "redis://cache.internal:6379/0", ledger: "postgres://db.internal/shop", table: numbers}}
`), "yaml")
	if err != nil {
		panic(err)
	}
	for _, name := range cfg.Names() {
		st, err := cfg.StoreInfo(name)
		fmt.Printf("%s: %q %v\n", name, st.ID, err)
	}
	// Output:
	// orders: "" config: line 4: template "orders": sequence.ledger: ledger "postgres://db.internal/shop": no ledger driver for postgres is linked: import _ "github.com/sngen/sn/backend/sql" and a PostgreSQL driver, _ "github.com/jackc/pgx/v5/stdlib"
	// tickets: "redis redis://:xxxxx@cache.internal:6379/0 prefix \"t:\"" <nil>
}

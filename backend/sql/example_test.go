package sql_test

import (
	"fmt"

	_ "github.com/sngen/sn/backend/sql"
	"github.com/sngen/sn/config"
)

// A PostgreSQL ledger needs a database/sql driver for PostgreSQL in the
// program; without one, the config is refused when it is checked, before
// anything is opened, with the import to add. This program links none.
func Example() {
	cfg, err := config.Decode([]byte(`
store: {backend: sql, ledger: "postgres://sn:secret@db.internal/orders", table: billing.sn_ledger}
templates:
  orders: {template: "SN-@<seq, width=8>"}
`), "yaml")
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.Validate())
	// Output:
	// config: line 4: template "orders": sequence.ledger: ledger "postgres://sn:xxxxx@db.internal/orders": no database/sql driver for PostgreSQL is linked: import _ "github.com/jackc/pgx/v5/stdlib"
}

package snowflake_test

import (
	"fmt"

	_ "github.com/sngen/sn/backend/snowflake"
	"github.com/sngen/sn/config"
)

// Snowflake ids from a fixed worker id, for one process alone (a test, a
// tool); a worker id that several processes share is leased instead, from
// a ledger or, with backend/redis imported, a Redis.
func Example() {
	cfg, err := config.Decode([]byte(`
templates:
  ids:    {template: "ID@<seq>", sequence: {backend: snowflake, worker: 3, single_process: true}}
  leased: {template: "L@<seq>", sequence: {backend: snowflake, url: "redis://cache.internal:6379/0"}}
`), "yaml")
	if err != nil {
		panic(err)
	}
	st, err := cfg.StoreInfo("ids")
	fmt.Printf("%s, durable %v, %d bits, %v\n", st.ID, st.Durable, st.Bits, err)
	_, err = cfg.StoreInfo("leased")
	fmt.Println(err)
	// Output:
	// snowflake twitter worker 3, durable false, 63 bits, <nil>
	// config: line 4: template "leased": sequence.url: url "redis://cache.internal:6379/0": no lease driver for redis is linked: import _ "github.com/sngen/sn/backend/redis"
}

package etcd_test

import (
	"fmt"

	_ "github.com/sngen/sn/backend/etcd"
	"github.com/sngen/sn/config"
)

// An etcd ledger, given as a URL or as endpoints: one cluster is one
// store, whatever the order of its members, and each prefix a keyspace of
// its own.
func Example() {
	cfg, err := config.Decode([]byte(`
templates:
  orders:  {template: "SN-@<seq>", sequence: {backend: etcd, ledger: "etcd://db2:2379,db1:2379,db3:2379"}}
  refunds: {template: "RF-@<seq>", sequence: {backend: etcd, endpoints: [db1:2379, db2:2379, db3:2379], prefix: refunds/}}
`), "yaml")
	if err != nil {
		panic(err)
	}
	for _, name := range cfg.Names() {
		st, err := cfg.StoreInfo(name)
		fmt.Println(st.ID, err)
	}
	// Output:
	// etcd ledger etcd http://db1:2379,http://db2:2379,http://db3:2379 prefix sn/ <nil>
	// etcd ledger etcd http://db1:2379,http://db2:2379,http://db3:2379 prefix refunds/ <nil>
}

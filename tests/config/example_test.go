package config_test

import (
	"fmt"

	"github.com/sngen/sn/config"
)

// Queues, balanced members and snowflake worker ids are checked with the
// rest: a fixed worker id needs single_process, the members of a balanced
// sequence are 2, 4, 8... distinct stores.
func ExampleConfig_Validate_kinds() {
	cfg, err := config.Decode([]byte(`
templates:
  orders:
    template: "SN-@<seq>"
    sequence:
      backend: redis-strict
      ledger: postgres://sn:secret@db.internal/shop
      queued: {lead: 50ms}
      balanced:
        members:
          - url: redis://cache-a.internal:6379/0
          - url: redis://cache-b.internal:6379/0
          - url: redis://cache-a.internal:6379/0
  shipments:
    template: "SH@<seq>"
    sequence: {backend: snowflake, worker: 3}
`), "yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Validate())
	// Output:
	// config: line 10: template "orders": sequence.balanced.members 3 stores: want a power of two from 2 to 65536 (a member's index takes the low bits of each number)
	// config: line 13: template "orders": sequence.balanced.members[2]: the same store as sequence.balanced.members[0] (redis-strict redis://cache-a.internal:6379/0 prefix "sn:" ledger postgres://sn:xxxxx@db.internal/shop table sn_ledger): members fail over to one another, so each must be a store of its own
	// config: line 16: template "shipments": sequence.worker: worker 3: a fixed worker id repeats ids when two processes use it (two copies of this file, two runs at once) or when a process restarts after the clock went back: set url to lease worker ids from a Redis, or single_process: true if one process alone issues with this worker id (a test, a tool)
}

package config_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/config"
)

func ExampleParse() {
	cfg, err := config.Decode([]byte(`
store:
  backend: bolt
  path: sn.db
  step: 100
templates:
  orders:
    template: "SN-@<seq, width=8>-@<checksum, algo=luhn>"
    floor: 20000
  tickets:
    template: "QJ@<seq, width=6>"
    sequence:
      backend: memory
`), "yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range cfg.Names() {
		s, _ := cfg.Sequence(name)
		fmt.Printf("%s: %s from %s %s\n", name, cfg.Templates[name].Template, s.Backend, s.Options["path"])
	}

	_, err = config.Decode([]byte("templates:\n  orders:\n    tempalte: SN-@<seq>\n"), "yaml")
	fmt.Println(err)
	// Output:
	// orders: SN-@<seq, width=8>-@<checksum, algo=luhn> from bolt sn.db
	// tickets: QJ@<seq, width=6> from memory sn.db
	// config: line 3: template "orders": unknown field "tempalte" (known: floor, profile, sequence, template, tenant)
}

func ExampleLoad() {
	dir, err := os.MkdirTemp("", "sn-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sn.json")
	err = os.WriteFile(path, []byte(`{"templates": {"invoices": {"template": "INV-@<seq, width=5>"}}}`), 0o600)
	if err != nil {
		panic(err)
	}

	cfg, err := config.Load(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Templates["invoices"].Template)
	// Output:
	// INV-@<seq, width=5>
}

func ExampleConfig_Build() {
	cfg := &config.Config{Templates: map[string]config.Template{
		"orders":  {Template: "SN-@<seq, width=8>-@<checksum, algo=luhn>", Floor: 20000},
		"tickets": {Template: "QJ@<date, format=yyyyMMdd>@<seq, width=5, reset=day>"},
	}}
	// Every template here counts in memory; import package
	// github.com/sngen/sn/backend for bolt, sql and redis.
	at := time.Date(2017, 3, 4, 10, 0, 0, 0, time.UTC)
	set, err := cfg.Build(context.Background(), config.WithOptions(sn.WithClock(func() time.Time { return at })))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()

	orders, _ := set.Get("orders")
	tickets, _ := set.Get("tickets")
	for range 2 {
		o, _ := orders.Next(context.Background())
		t, _ := tickets.Next(context.Background())
		fmt.Println(o, t)
	}
	// Output:
	// SN-00020001-4 QJ2017030400001
	// SN-00020002-2 QJ2017030400002
}

func ExampleConfig_Validate() {
	cfg := &config.Config{Templates: map[string]config.Template{
		"orders":  {Template: "SN-@<seq, widht=8>"},
		"tickets": {Template: "QJ@<seq>", Sequence: config.Sequence{Backend: "mysql"}},
		"refunds": {Template: "RF@<seq>", Sequence: config.Sequence{Backend: "bolt"}},
	}}
	fmt.Println(cfg.Validate())
	// Output:
	// config: template "orders": sn: template: offset 10: seq: unknown argument "widht": did you mean width?
	// 	SN-@<seq, widht=8>
	// 	          ^
	// config: template "refunds": sequence.path: the bolt backend needs a file (set path here or in store)
	// config: template "tickets": sequence.backend "mysql": unknown (want bolt, etcd, memory, redis, redis-strict, snowflake, sql, sqlite; for mysql, set backend: sql and ledger: mysql://user:password@host:3306/db)
}

func ExampleDrivers() {
	fmt.Println(config.Drivers())
	_, err := config.Lookup("rdis")
	fmt.Println(err)
	// Output:
	// [bolt etcd memory redis redis-strict snowflake sql sqlite]
	// config: backend "rdis": unknown, did you mean "redis"? (want bolt, etcd, memory, redis, redis-strict, snowflake, sql, sqlite)
}

// Machines that share a Redis share a ledger too: a redis-strict counter
// refilled from a file of one machine's is refused, unless single_host
// says that one host alone uses the Redis.
func ExampleConfig_Validate_ledger() {
	cfg, err := config.Decode([]byte(`
store: {backend: redis-strict, url: "redis://cache.internal:6379/0", path: sn.db}
templates:
  orders: {template: "SN-@<seq, width=8>"}
  refunds: {template: "RF-@<seq, width=8>", sequence: {ledger: "postgres://sn:secret@db.internal/shop"}}
  tickets: {template: "QJ@<seq, width=6>", sequence: {single_host: true}}
`), "yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Validate())
	// Output:
	// config: line 4: template "orders": sequence.path: path "sn.db": a file is one machine's, and behind a Redis that several machines share it repeats numbers once Redis loses its data: set ledger to a database every machine shares (postgres://user:password@host:5432/db, mysql://user:password@host:3306/db or etcd://host1:2379,host2:2379,host3:2379), or single_host: true if one host alone uses this Redis
}

// A balanced sequence is durable when each of its members is; its store
// is its members, in order.
func ExampleConfig_StoreInfo() {
	cfg, err := config.Decode([]byte(`
store: {backend: bolt}
templates:
  orders:
    template: "SN-@<seq>"
    sequence:
      balanced:
        members: [{path: a.db}, {path: b.db}]
  tickets:
    template: "QJ@<seq>"
    sequence:
      balanced:
        members: [{path: a.db}, {backend: memory}]
`), "yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range cfg.Names() {
		st, err := cfg.StoreInfo(name, config.WithDir("/var/lib/shop"))
		fmt.Printf("%s: %s, durable %v, %v\n", name, st.ID, st.Durable, err)
	}
	// Output:
	// orders: balanced [bolt /var/lib/shop/a.db; bolt /var/lib/shop/b.db], durable true, <nil>
	// tickets: balanced [bolt /var/lib/shop/a.db; memory], durable false, <nil>
}

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

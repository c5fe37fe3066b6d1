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
	// the package of a backend, such as github.com/sngen/sn/backend/bolt, to use it.
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
	// config: template "tickets": sequence.backend "mysql": unknown (want bolt, memory, snowflake, sql; for mysql, set backend: sql and ledger: mysql://user:password@host:3306/db)
}

func ExampleDrivers() {
	fmt.Println(config.Drivers())
	_, err := config.Lookup("rdis")
	fmt.Println(err)
	// Output:
	// [bolt memory snowflake sql]
	// config: backend "rdis": unknown, did you mean "redis"? (want bolt, memory, snowflake, sql; import _ "github.com/sngen/sn/backend/redis" for redis)
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

package sn_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sngen/sn"
)

func ExampleParseConfig() {
	cfg, err := sn.ParseConfig([]byte(`
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
		sc, _ := cfg.Sequence(name)
		fmt.Printf("%s: %s from %s %s\n", name, cfg.Templates[name].Template, sc.Backend, sc.Path)
	}

	_, err = sn.ParseConfig([]byte("templates:\n  orders:\n    tempalte: SN-@<seq>\n"), "yaml")
	fmt.Println(err)
	// Output:
	// orders: SN-@<seq, width=8>-@<checksum, algo=luhn> from bolt sn.db
	// tickets: QJ@<seq, width=6> from memory sn.db
	// sn: config: line 3: template "orders": unknown field "tempalte" (known: floor, sequence, template)
}

func ExampleLoadConfig() {
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

	cfg, err := sn.LoadConfig(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Templates["invoices"].Template)
	// Output:
	// INV-@<seq, width=5>
}

func ExampleConfig_Build() {
	cfg := &sn.Config{Templates: map[string]sn.TemplateConfig{
		"orders":  {Template: "SN-@<seq, width=8>-@<checksum, algo=luhn>", Floor: 20000},
		"tickets": {Template: "QJ@<date, format=yyyyMMdd>@<seq, width=5, reset=day>"},
	}}
	// Every template here counts in memory, so Build needs no Opener; pass
	// the Open method of package backend's Opener for bolt and redis.
	at := time.Date(2017, 3, 4, 10, 0, 0, 0, time.UTC)
	set, err := cfg.Build(context.Background(), nil, sn.WithClock(func() time.Time { return at }))
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
	cfg := &sn.Config{Templates: map[string]sn.TemplateConfig{
		"orders": {Template: "SN-@<seq, widht=8>"},
		"tickets": {Template: "QJ@<seq>", Sequence: sn.SequenceConfig{
			Backend: "mysql",
		}},
	}}
	fmt.Println(cfg.Validate())
	// Output:
	// sn: config: template "orders": sn: template: offset 10: seq: unknown argument "widht" (known: key, overflow, reset, width)
	// 	SN-@<seq, widht=8>
	// 	          ^
	// sn: config: template "tickets": sequence.backend "mysql": unknown (want memory, bolt, redis, redis-strict)
}

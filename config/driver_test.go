package config_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
)

// nopDriver opens memory sequences.
type nopDriver struct{}

func (nopDriver) Check(*config.Target) (config.StoreInfo, error) {
	return config.StoreInfo{ID: "nop"}, nil
}
func (nopDriver) Open(context.Context, *config.Target) (sequence.Gen, error) {
	return sequence.NewMemory(), nil
}

func TestRegisterPanics(t *testing.T) {
	tests := []struct {
		name, driver string
		d            config.Driver
		want         string
	}{
		{"nil", "x", nil, "config: Register driver x is nil"},
		{"twice", "memory", nopDriver{}, "config: Register called twice for driver memory"},
		{"empty name", "", nopDriver{}, `config: Register driver "": a name is made of letters, digits, "-" and "_"`},
		{"bad name", "my.sql", nopDriver{}, `config: Register driver "my.sql": a name is made of letters, digits, "-" and "_"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if r := recover(); fmt.Sprint(r) != tt.want {
					t.Errorf("panic %v, want %s", r, tt.want)
				}
			}()
			config.Register(tt.driver, tt.d)
		})
	}
}

func TestDrivers(t *testing.T) {
	config.RegisterForTest(t, "Z_custom-1", nopDriver{})
	want := []string{"Z_custom-1", "bolt", "memory", "snowflake", "sql"}
	if got := config.Drivers(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Drivers = %q, want %q", got, want)
	}
	if d, err := config.Lookup("Z_custom-1"); err != nil || d != (nopDriver{}) {
		t.Errorf("Lookup = %v, %v", d, err)
	}
	// A custom backend is built like the others.
	cfg := config.Config{Templates: map[string]config.Template{"a": {Template: "A@<seq>", Sequence: config.Sequence{Backend: "Z_custom-1"}}}}
	set, err := cfg.Build(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	set.Close()
}

func TestLookupErrors(t *testing.T) {
	tests := []struct{ name, want string }{
		{"rdis", `config: backend "rdis": unknown, did you mean "redis"? (want bolt, memory, snowflake, sql; import _ "github.com/sngen/sn/backend/redis" for redis)`},
		{"Memory", `config: backend "Memory": unknown, did you mean "memory"? (want bolt, memory, snowflake, sql)`},
		{"redis-strikt", `config: backend "redis-strikt": unknown, did you mean "redis-strict"? (want bolt, memory, snowflake, sql; import _ "github.com/sngen/sn/backend/redis/strict" for redis-strict)`},
		{"mysql", `config: backend "mysql": unknown (want bolt, memory, snowflake, sql; for mysql, set backend: sql and ledger: mysql://user:password@host:3306/db)`},
		{"sqll", `config: backend "sqll": unknown, did you mean "sql"? (want bolt, memory, snowflake, sql)`},
		{"x", `config: backend "x": unknown (want bolt, memory, snowflake, sql)`},
		{"", `config: backend "": unknown (want bolt, memory, snowflake, sql)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := config.Lookup(tt.name); err == nil || err.Error() != tt.want {
				t.Errorf("Lookup(%q) = %v, want %s", tt.name, err, tt.want)
			}
		})
	}
}

func TestMemoryDriver(t *testing.T) {
	d, err := config.Lookup("memory")
	if err != nil {
		t.Fatal(err)
	}
	st, err := d.Check(&config.Target{Name: "a", Sequence: config.Sequence{Backend: "memory"}})
	if err != nil || st.ID != "memory" || st.Durable || len(st.Fields) != 0 {
		t.Errorf("Check = %+v, %v; want ID memory, not durable, no fields", st, err)
	}
}

// A ledger driver registers a URL scheme; a mistake in registering is the
// program's, and panics.
func TestRegisterLedgerPanics(t *testing.T) {
	for _, tt := range []struct {
		name, scheme string
		d            config.LedgerDriver
	}{
		{"nil", "nilledger", nil},
		{"upper case", "Ledger", nopLedger{}},
		{"taken", "postgres", nopLedger{}},
		{"empty", "", nopLedger{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterLedger(%q) did not panic", tt.scheme)
				}
			}()
			config.RegisterLedger(tt.scheme, tt.d)
		})
	}
	if got := fmt.Sprint(config.LedgerSchemes()); got != "[mysql postgres postgresql]" {
		t.Errorf("LedgerSchemes = %s, want backend/sql's", got)
	}
}

type nopLedger struct{}

func (nopLedger) CheckLedger(*config.Target, string) (config.LedgerInfo, error) {
	return config.LedgerInfo{}, nil
}

func (nopLedger) OpenLedger(context.Context, *config.Target, string) (config.Ledger, error) {
	return nil, errors.ErrUnsupported
}

// CheckLedger says which package to import for a well-known scheme not
// linked, what a ledger looks like, and that a ledger's field needs a
// ledger.
func TestCheckLedger(t *testing.T) {
	for _, tt := range []struct {
		url  string
		opts config.Options
		want string
	}{
		{url: "etcds://u:pw@h1:2379/x/", want: `ledger "etcds://u:xxxxx@h1:2379/x/": no ledger driver for etcds is linked: import _ "github.com/sngen/sn/backend/etcd"`},
		{url: "db.internal:5432", want: `ledger "db.internal:5432": want a URL such as postgres://user:password@host:5432/db, mysql://user:password@host:3306/db or etcd://host1:2379,host2:2379,host3:2379`},
		{url: "oracle://db/x", want: `ledger "oracle://db/x": unknown scheme "oracle" (want etcd, etcds, mysql, postgres, postgresql: `},
		{url: "", opts: config.Options{"table": "numbers"}, want: "table numbers is a ledger's setting: set ledger too"},
		{url: "postgres://db/x", want: `no database/sql driver for PostgreSQL is linked: import _ "github.com/jackc/pgx/v5/stdlib"`},
	} {
		t.Run(tt.url, func(t *testing.T) {
			target := &config.Target{Name: "a", Sequence: config.Sequence{Backend: "redis", Options: tt.opts}}
			info, err := config.CheckLedger(target, tt.url)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckLedger(%q) = %v\nwant it to say %s", tt.url, err, tt.want)
			}
			if !slices.Contains(info.Fields, "table") {
				t.Errorf("CheckLedger(%q) Fields = %q: want the fields of the registered ledgers, so that table is not also reported unused", tt.url, info.Fields)
			}
		})
	}
	info, err := config.CheckLedger(&config.Target{Name: "a"}, "")
	if err != nil || fmt.Sprint(info.Fields) != "[table replication]" {
		t.Errorf("CheckLedger without a ledger = %+v, %v", info, err)
	}
}

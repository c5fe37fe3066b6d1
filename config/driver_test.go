package config_test

import (
	"context"
	"fmt"
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

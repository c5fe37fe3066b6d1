package config_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sngen/sn/config"
)

const obfConfig = `
obfuscation:
  orders:
    env: SN_TEST_ORDERS_KEY
templates:
  orders:
    template: "ORD-@<seq, width=6, obfuscate=orders>"
`

// A key named in the config's obfuscation section comes from the
// environment, and the template's numbers read back.
func TestObfuscation(t *testing.T) {
	t.Setenv("SN_TEST_ORDERS_KEY", "0123456789abcdef0123")
	c, err := config.Decode([]byte(obfConfig), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	set, err := c.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	g, _ := set.Get("orders")
	seen := map[string]bool{}
	for n := int64(1); n <= 2000; n++ {
		s, err := g.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if seen[s] {
			t.Fatalf("%q twice", s)
		}
		seen[s] = true
		if p, err := g.Parse(s); err != nil || p.Seq != n {
			t.Fatalf("Parse(%q) = %v, %v; drew %d", s, p.Seq, err, n)
		}
	}
}

func TestObfuscationErrors(t *testing.T) {
	tests := []struct {
		env, cfg, want string
	}{
		{"", obfConfig, `obfuscation.orders.env: the environment variable SN_TEST_ORDERS_KEY is not set`},
		{"short", obfConfig, `obfuscation.orders.env: the key in SN_TEST_ORDERS_KEY is 5 bytes, want at least 16`},
		{"0123456789abcdef", strings.Replace(obfConfig, "env: SN_TEST_ORDERS_KEY", "env: \"\"", 1), `obfuscation.orders.env: missing`},
		{"0123456789abcdef", strings.Replace(obfConfig, "obfuscate=orders", "obfuscate=order", 1), `obfuscate=order: no key of that name (did you mean orders?)`},
	}
	for _, tt := range tests {
		t.Setenv("SN_TEST_ORDERS_KEY", tt.env)
		c, err := config.Decode([]byte(tt.cfg), "yaml")
		if err != nil {
			t.Fatal(err)
		}
		err = c.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate = %v, want an error with %q", err, tt.want)
		}
	}
}

package backend_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/internal/redistest"
)

// TestStoreIdentity: two entries of a config that reach one store under
// two spellings (a ledger's DSN with a parameter more, one Redis with
// and without its database number, an etcd cluster by all its endpoints
// and by one) are refused at Build, the error naming both
// templates; whether they are two tenants' or one's. The control: the
// same spellings, reaching two stores (another database, another
// prefix), build.
func TestStoreIdentity(t *testing.T) {
	two := func(a, b config.Sequence, tenants bool) *config.Config {
		c := &config.Config{Templates: map[string]config.Template{
			"orders":   {Template: "O-@<seq>", Sequence: a},
			"invoices": {Template: "I-@<seq>", Sequence: b},
		}}
		if tenants {
			c.Tenants = map[string]config.Tenant{"shop": {}, "billing": {}}
			o, i := c.Templates["orders"], c.Templates["invoices"]
			o.Tenant, i.Tenant = "shop", "billing"
			c.Templates["orders"], c.Templates["invoices"] = o, i
		}
		return c
	}
	// Another spelling of the same server: a parameter that changes
	// nothing of where the store is.
	local := func(u string) string {
		param := "connect_timeout=7"
		if strings.HasPrefix(u, "mysql:") {
			param = "timeout=7s"
		}
		if strings.Contains(u, "?") {
			return u + "&" + param
		}
		return u + "?" + param
	}
	type pair struct{ a, b config.Sequence }
	cases := map[string]func(t *testing.T) (same, apart pair){}
	for _, d := range databases {
		cases[d.name] = func(t *testing.T) (pair, pair) {
			ledger, _ := d.fresh(t)
			other, _ := d.fresh(t)
			seq := func(l string) config.Sequence {
				return config.Sequence{Backend: "sql", Options: config.Options{"ledger": l}}
			}
			return pair{seq(ledger), seq(local(ledger))}, pair{seq(ledger), seq(local(other))}
		}
	}
	cases["redis"] = func(t *testing.T) (pair, pair) {
		addr := redistest.Start(t, redistest.Persistent()).Addr()
		seq := func(u, prefix string) config.Sequence {
			return config.Sequence{Backend: "redis", Options: config.Options{"url": u, "prefix": prefix}}
		}
		u := "redis://" + addr + "/0"
		return pair{seq(u, "sn:"), seq("redis://"+addr, "sn:")}, pair{seq(u, "a:"), seq("redis://"+addr, "b:")}
	}
	cases["etcd"] = func(t *testing.T) (pair, pair) {
		all := etcdLedger(t) // etcd://h1,h2,h3/test-N/
		hosts, prefix, _ := strings.Cut(strings.TrimPrefix(all, "etcd://"), "/")
		first, _, _ := strings.Cut(hosts, ",")
		seq := func(l string) config.Sequence {
			return config.Sequence{Backend: "etcd", Options: config.Options{"ledger": l}}
		}
		return pair{seq(all), seq("etcd://" + first + "/" + prefix)}, pair{seq(all), seq("etcd://" + first + "/" + strings.TrimSuffix(prefix, "/") + "-other/")}
	}
	for name, mk := range cases {
		for _, tenants := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/tenants=%v", name, tenants), func(t *testing.T) {
				same, apart := mk(t)
				set, err := two(same.a, same.b, tenants).Build(t.Context())
				if err == nil {
					set.Close()
					t.Fatal("one store under two spellings: built")
				}
				for _, want := range []string{"orders", "invoices", "spelt another way"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("the refusal does not say %q: %v", want, err)
					}
				}
				set, err = two(apart.a, apart.b, tenants).Build(t.Context())
				if err != nil {
					t.Fatalf("control: two stores: %v", err)
				}
				set.Close()
			})
		}
	}
}

package config_test

import (
	"strings"
	"testing"

	_ "github.com/sngen/sn/backend/bolt"
	"github.com/sngen/sn/config"
)

// Tenants print what they like, each in stores of its own: one template
// text in two tenants is two series, each proven apart only from its own
// tenant's templates.
func TestTenants(t *testing.T) {
	cfg := must(config.Decode([]byte(`
store: {backend: bolt, path: common.db}
tenants:
  shop:    {store: {path: shop.db}}
  billing: {store: {path: billing.db, step: 10}}
templates:
  a: {template: "INV-@<seq, width=6>"}
  b: {template: "INV-@<seq, width=6>", tenant: shop}
  c: {template: "INV-@<seq, width=6>", tenant: billing}
`), "yaml"))
	set, err := cfg.Build(t.Context(), config.WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	for _, name := range []string{"a", "b", "c"} {
		g, _ := set.Get(name)
		n, err := g.Next(t.Context())
		if err != nil || n != "INV-000001" {
			t.Errorf("%s: %v %v; want INV-000001, the first of a series of its own", name, n, err)
		}
	}
	for name, want := range map[string]string{"a": "", "b": "shop", "c": "billing"} {
		if got, ok := set.Tenant(name); got != want || !ok {
			t.Errorf("Tenant(%s) = %q, %v; want %q", name, got, ok, want)
		}
		if id, _ := set.StoreID(name); !strings.HasSuffix(id, map[string]string{"a": "common.db", "b": "shop.db", "c": "billing.db"}[name]) {
			t.Errorf("StoreID(%s) = %s", name, id)
		}
	}
	if seq, _ := cfg.Sequence("c"); seq.Step != 10 || seq.Options["path"] != "billing.db" {
		t.Errorf("Sequence(c) = %+v: want the tenant's store over the config's", seq)
	}
}

// The mistakes a tenant's configuration can hold, each with its line.
func TestTenantErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"undeclared", `
templates:
  a: {template: "A@<seq>", tenant: shop}
`, `line 3: template "a": tenant "shop": no such tenant (none are declared: add it under tenants)`},
		{"misspelt", `
tenants:
  shop: {}
templates:
  a: {template: "A@<seq>", tenant: shp}
`, `tenant "shp": no such tenant (declared: shop; did you mean shop?)`},
		{"a shared store", `
store: {backend: bolt, path: sn.db}
tenants:
  shop: {}
templates:
  a: {template: "A@<seq>"}
  b: {template: "B@<seq>", tenant: shop}
`, `line 7: template "b": its store bolt `},
		{"two tenants on one store", `
store: {backend: bolt, path: sn.db}
tenants:
  shop: {store: {path: x.db}}
  billing: {store: {path: x.db}}
templates:
  a: {template: "A@<seq>", tenant: billing}
  b: {template: "B@<seq>", tenant: shop}
`, `tenants share no store, so that one's numbers tell nothing of another's; give tenant shop a store of its own in tenants.shop.store`},
		{"a member shared", `
store: {backend: bolt, path: sn.db}
tenants:
  shop: {store: {balanced: {members: [{path: m1.db}, {path: m2.db}]}}}
templates:
  a: {template: "A@<seq>", sequence: {path: m2.db}}
  b: {template: "B@<seq>", tenant: shop}
`, `m2.db is that of template a (of no tenant)`},
		{"a shared store whose path says template", `
store: {backend: bolt, path: "my template files/sn.db"}
tenants:
  shop: {}
templates:
  a: {template: "A@<seq>"}
  b: {template: "B@<seq>", tenant: shop}
`, `tenants share no store`},
		{"a misspelt field of a tenant's store", `
store: {backend: bolt, path: sn.db}
tenants:
  shop: {store: {pth: shop.db}}
templates:
  b: {template: "B@<seq>", tenant: shop}
`, `line 4: tenants.shop.store.pth: not used by the backend of any template (bolt); did you mean path?`},
		{"a bad name", `
tenants:
  "sh op": {}
templates:
  b: {template: "B@<seq>"}
`, `tenant "sh op": bad name`},
		{"a bad backend", `
tenants:
  shop: {store: {backend: bolts}}
templates:
  b: {template: "B@<seq>", tenant: shop}
`, `tenants.shop.store.backend "bolts": unknown`},
		{"proven within a tenant", `
tenants:
  shop: {}
templates:
  a: {template: "X@<seq>", tenant: shop}
  b: {template: "X@<seq, width=3>@<seq>", tenant: shop}
`, `template "a"`},
		{"tenants as a list", `
tenants: [shop]
templates:
  b: {template: "B@<seq>"}
`, `want a mapping of tenants by name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Decode([]byte(tc.yaml), "yaml")
			if err == nil {
				err = cfg.Validate()
			}
			t.Log(err)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant it to say %s", err, tc.want)
			}
		})
	}
}

// On the memory backend each tenant has a Memory of its own: two tenants'
// equal templates count apart, and are not refused as sharing a store.
func TestTenantsMemory(t *testing.T) {
	cfg := must(config.Decode([]byte(`
tenants: {shop: {}, billing: {}}
templates:
  a: {template: "INV-@<seq>", tenant: shop}
  b: {template: "INV-@<seq>", tenant: billing}
  c: {template: "INV-@<seq>"}
`), "yaml"))
	set, err := cfg.Build(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	ids := map[string]bool{}
	for _, name := range []string{"a", "b", "c"} {
		g, _ := set.Get(name)
		if n, err := g.Next(t.Context()); err != nil || n != "INV-1" {
			t.Errorf("%s: %v %v; want INV-1", name, n, err)
		}
		id, _ := set.StoreID(name)
		ids[id] = true
	}
	if len(ids) != 3 {
		t.Errorf("store IDs %v: want one per tenant", ids)
	}
}

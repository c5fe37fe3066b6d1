package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/sngen/sn"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/metrics"
	"github.com/sngen/sn/server"
	"github.com/sngen/sn/wire"
)

// tenantsConfig serves two tenants and the templates of none, each
// tenant in a bbolt file of its own. The billing tenant's template text,
// name and file are words no other part of the config holds, so that an
// answer that leaks one of them is found.
const tenantsConfig = `
store: {backend: bolt, path: common.db}
tenants:
  shop:    {store: {path: shop.db}}
  billing: {store: {path: ledgerfile.db}}
templates:
  order:    {template: "ORD-@<seq, width=6>", tenant: shop}
  order-eu: {template: "EU-@<seq, width=6>", tenant: shop}
  invoice:  {template: "SECRETBILL-@<seq, width=6>", tenant: billing}
  misc:     {template: "M-@<seq, width=6>"}
`

// billingWords are what tenant billing's answers hold and no other's.
var billingWords = []string{"invoice", "SECRETBILL", "ledgerfile", "billing"}

// scoped is a token of the scope test, with its scope as a table of its
// own, which the expectations are computed from.
type scoped struct {
	server.Token
}

// may reports whether the token may do action with template name of
// tenant, and whether it reaches the template at all.
func (s scoped) may(action server.Action, name, tenant string) (reaches, allowed bool) {
	if s.Tenant != server.AnyTenant && s.Tenant != tenant {
		return false, false
	}
	reaches = len(s.Templates) == 0
	for _, p := range s.Templates {
		if ok, _ := path.Match(p, name); ok {
			reaches = true
		}
	}
	return reaches, reaches && slices.Contains(s.Actions, action)
}

func secret(id string) string { return id + "-secret-0123456789abcdef" }

var scopedTokens = []scoped{
	{server.Token{ID: "shop-issue", Tenant: "shop", Templates: []string{"order"}, Actions: []server.Action{server.Issue}}},
	{server.Token{ID: "shop-read", Tenant: "shop", Actions: []server.Action{server.Read}}},
	{server.Token{ID: "shop-monitor", Tenant: "shop", Templates: []string{"order*"}, Actions: []server.Action{server.Monitor}}},
	{server.Token{ID: "shop-admin", Tenant: "shop", Actions: []server.Action{server.Admin}}},
	{server.Token{ID: "billing-all", Tenant: "billing", Actions: server.Actions}},
	{server.Token{ID: "misc-issue", Actions: []server.Action{server.Issue, server.Read}}},
	{server.Token{ID: "ops", Tenant: server.AnyTenant, Actions: []server.Action{server.Monitor}}},
}

// startScoped serves tenantsConfig with scopedTokens and package metrics.
func startScoped(t *testing.T) (*httptest.Server, *config.Set) {
	t.Helper()
	cfg, err := config.Decode([]byte(tenantsConfig), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector())
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	set, err := cfg.Build(t.Context(), config.WithDir(t.TempDir()), config.WithOptions(sn.WithMiddleware(m.Middleware())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	for _, name := range set.Names() {
		seq, _ := set.Gen(name)
		id, _ := set.StoreID(name)
		m.Watch(id, seq)
	}
	var tokens []server.Token
	for _, s := range scopedTokens {
		tok := s.Token
		tok.Secret = secret(s.ID)
		tokens = append(tokens, tok)
	}
	h, err := server.New(set, server.Options{Scoped: tokens, MetricsFor: func(templates, stores map[string]bool, all bool) http.Handler {
		return metrics.Handler(reg, templates, stores, all)
	}})
	if err != nil {
		t.Fatal(err)
	}
	m.WatchCapacity(func() map[string]metrics.Capacity {
		out := map[string]metrics.Capacity{}
		for name, c := range h.Capacities() {
			out[name] = metrics.Capacity{Ratio: c.Ratio}
		}
		return out
	})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts, set
}

// send sends a request with a token's secret and returns the status and
// the body.
func send(t *testing.T, ts *httptest.Server, token, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Every route with a template, for every token and template: allowed
// exactly where the scope says; 403 where the token reaches the template
// but lacks the action; 404, as for a template that does not exist, for
// one it does not reach.
func TestScopes(t *testing.T) {
	ts, set := startScoped(t)
	routes := []struct {
		method, path, body string
		action             server.Action
		alt                server.Action // a second action that also gives the route, or ""
	}{
		{"GET", "/v1/templates/%s", "", server.Read, server.Issue},
		{"POST", "/v1/templates/%s/next", `{"n": 2}`, server.Issue, ""},
		{"POST", "/v1/templates/%s/preview", `{}`, server.Read, ""},
		{"POST", "/v1/templates/%s/validate", `{"number": "X"}`, server.Read, ""},
		{"POST", "/v1/templates/%s/parse", `{"number": "X"}`, server.Read, ""},
		{"POST", "/v1/templates/%s/void", `{"number": "X", "reason": "a test"}`, server.Admin, ""},
		{"POST", "/v1/templates/%s/blocks", `{"key": "X", "n": 10, "template": "X", "engine": "X", "now": "2026-01-01T00:00:00Z"}`, server.Issue, ""},
	}
	checked := map[string]int{}
	for _, tok := range scopedTokens {
		for _, name := range set.Names() {
			tenant, _ := set.Tenant(name)
			for _, rt := range routes {
				p := fmt.Sprintf(rt.path, name)
				reaches, allowed := tok.may(rt.action, name, tenant)
				if rt.alt != "" {
					_, alt := tok.may(rt.alt, name, tenant)
					allowed = allowed || alt
				}
				st, body := send(t, ts, secret(tok.ID), rt.method, p, rt.body)
				var want string
				switch {
				case !reaches:
					want = "404"
					if st != 404 || !strings.Contains(body, `"not_found"`) {
						t.Errorf("%s %s %s: %d %s; want 404 not_found", tok.ID, rt.method, p, st, body)
					}
					// Not found, word for word as a name that does not
					// exist: nothing tells that it does.
					_, none := send(t, ts, secret(tok.ID), rt.method, fmt.Sprintf(rt.path, "zz"+name[2:]), rt.body)
					if strings.ReplaceAll(body, name, "NAME") != strings.ReplaceAll(none, "zz"+name[2:], "NAME") {
						t.Errorf("%s %s %s: %s; a name that does not exist: %s", tok.ID, rt.method, p, body, none)
					}
				case !allowed:
					want = "403"
					if st != 403 || !strings.Contains(body, `"forbidden"`) || !strings.Contains(body, tok.ID) {
						t.Errorf("%s %s %s: %d %s; want 403 forbidden naming the token", tok.ID, rt.method, p, st, body)
					}
				default:
					want = "allowed"
					if st == 401 || st == 403 || st == 404 {
						t.Errorf("%s %s %s: %d %s; want it allowed", tok.ID, rt.method, p, st, body)
					}
				}
				checked[want]++
				if tenant != "billing" && !strings.HasPrefix(tok.ID, "billing") && tok.ID != "ops" {
					for _, w := range billingWords {
						if strings.Contains(body, w) {
							t.Errorf("%s %s %s: the answer tells of tenant billing (%q): %s", tok.ID, rt.method, p, w, body)
						}
					}
				}
			}
		}
	}
	t.Logf("answers checked: %v", checked)
	for _, want := range []string{"404", "403", "allowed"} {
		if checked[want] < 5 {
			t.Errorf("only %d answers were %s: the table does not exercise the scopes", checked[want], want)
		}
	}

	// Without a token, or with one that is not listed: 401.
	for _, tok := range []string{"", strings.Repeat("x", 32)} {
		if st, _ := send(t, ts, tok, "POST", "/v1/templates/misc/next", `{}`); st != 401 {
			t.Errorf("token %q: %d, want 401", tok, st)
		}
	}
}

// What a token lists, monitors and measures is its templates' alone: no
// answer to a token of tenant shop holds a word of tenant billing's, and
// ops, of every tenant, sees them all. The control: billing's own token
// sees its words, so the test can see a leak.
func TestScopesLists(t *testing.T) {
	ts, _ := startScoped(t)
	// Issue from every template, so that each has metrics and a block.
	for _, tok := range []string{"billing-all", "misc-issue", "shop-issue"} {
		name := map[string]string{"billing-all": "invoice", "misc-issue": "misc", "shop-issue": "order"}[tok]
		if st, body := send(t, ts, secret(tok), "POST", "/v1/templates/"+name+"/next", `{"n": 3}`); st != 200 {
			t.Fatalf("%s: %d %s", tok, st, body)
		}
	}
	type view struct {
		path   string
		action server.Action
	}
	views := []view{{"/v1/templates", server.Read}, {"/v1/monitor", server.Monitor}, {"/metrics", server.Monitor}, {"/readyz", server.Monitor}}
	for _, tok := range scopedTokens {
		for _, v := range views {
			st, body := send(t, ts, secret(tok.ID), "GET", v.path, "")
			// Listing is read's alone (the scope table); a token that
			// issues only is refused it.
			allowed := slices.Contains(tok.Actions, v.action)
			switch {
			case v.path == "/readyz":
				if st != 200 {
					t.Errorf("%s %s: %d", tok.ID, v.path, st)
				}
			case !allowed:
				if st != 403 || !strings.Contains(body, `"forbidden"`) {
					t.Errorf("%s %s: %d %s; want 403", tok.ID, v.path, st, body)
				}
				continue
			case st != 200:
				t.Errorf("%s %s: %d %s; want 200", tok.ID, v.path, st, body)
				continue
			}
			seesBilling := allowed && (tok.Tenant == "billing" || tok.Tenant == server.AnyTenant)
			if seesBilling && !strings.Contains(body, "invoice") {
				t.Errorf("%s %s: want tenant billing's template (the control):\n%s", tok.ID, v.path, body)
			}
			if !seesBilling {
				for _, w := range billingWords {
					if strings.Contains(body, w) {
						t.Errorf("%s %s: holds %q, a word of tenant billing's:\n%s", tok.ID, v.path, w, body)
					}
				}
			}
			// Shop's monitor token reaches order and order-eu: it sees
			// them, and not misc.
			if tok.ID == "shop-monitor" && v.path != "/readyz" && v.path != "/v1/templates" {
				if !strings.Contains(body, `"order"`) || strings.Contains(body, `"misc"`) {
					t.Errorf("%s %s: want order and not misc:\n%s", tok.ID, v.path, body)
				}
			}
			if tok.ID == "ops" && v.path == "/metrics" && (!strings.Contains(body, "go_goroutines") || !strings.Contains(body, "sn_numbers_issued_total")) {
				t.Errorf("ops /metrics: want every series:\n%s", body)
			}
			if tok.ID == "shop-monitor" && v.path == "/metrics" && !strings.Contains(body, `sn_series_capacity_ratio{template="order"}`) {
				t.Errorf("shop-monitor /metrics: no capacity of order:\n%s", body)
			}
			if tok.ID == "shop-monitor" && v.path == "/metrics" && strings.Contains(body, "go_goroutines") {
				t.Errorf("shop-monitor /metrics: a series of the process, which only a token that reaches every template sees:\n%s", body)
			}
		}
	}
}

// A store that is down makes a token's monitor not ready only for a token
// whose templates use it: the shop's monitor token stays ready, and is
// told nothing of billing's store, while billing's token sees it down.
// /readyz, the load balancer's question, is every store's, with a token
// or without.
func TestReadyPerToken(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	ts, _ := startConfig(t, `
store: {backend: bolt, path: common.db}
tenants:
  shop:    {store: {path: shop.db}}
  billing: {store: {backend: redis, url: "redis://`+srv.Addr()+`/0"}}
templates:
  order:   {template: "ORD-@<seq, width=6>", tenant: shop}
  invoice: {template: "BILL-@<seq, width=6>", tenant: billing}
`, server.Options{Scoped: []server.Token{
		{ID: "shop-mon", Secret: secret("shop-mon"), Tenant: "shop", Actions: []server.Action{server.Monitor}},
		{ID: "billing-mon", Secret: secret("billing-mon"), Tenant: "billing", Actions: []server.Action{server.Monitor}},
	}})

	ready := func(token, path string) (int, wire.Health) {
		t.Helper()
		st, body := send(t, ts, token, "GET", path, "")
		var hl wire.Health
		if err := json.Unmarshal([]byte(body), &hl); err != nil {
			t.Fatalf("%s: %s: %v", path, body, err)
		}
		return st, hl
	}
	check := func(redisUp bool) {
		t.Helper()
		for _, c := range []struct {
			token, path string
			want        bool
		}{
			{secret("shop-mon"), "/v1/monitor", true},
			// /readyz is the load balancer's question, every store's,
			// asked without a token too; a token is told its own
			// stores there, and no other's.
			{secret("shop-mon"), "/readyz", redisUp},
			{secret("billing-mon"), "/v1/monitor", redisUp},
			{secret("billing-mon"), "/readyz", redisUp},
			{"", "/readyz", redisUp},
		} {
			st, hl := ready(c.token, c.path)
			if hl.Ready != c.want || (c.path == "/readyz" && (st == 200) != c.want) {
				t.Errorf("Redis up %v, %s with %q: %d, ready %v, want %v", redisUp, c.path, c.token, st, hl.Ready, c.want)
			}
			for _, s := range hl.Stores {
				if c.token == secret("shop-mon") && (strings.Contains(s.Store, "redis") || slices.Contains(s.Templates, "invoice")) {
					t.Errorf("shop's token is told of billing's store: %+v", s)
				}
			}
		}
	}
	check(true)
	srv.Kill(t)
	check(false)
}

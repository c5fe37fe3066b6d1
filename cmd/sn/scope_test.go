package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sendAs sends a POST with a bearer token and returns the status and the
// body.
func sendAs(t *testing.T, url, token, path, body string) (int, string) {
	t.Helper()
	return requestAs(t, "POST", url, token, path, body)
}

// getAs sends a GET with a bearer token and returns the status and the
// body.
func getAs(t *testing.T, url, token, path string) (int, string) {
	t.Helper()
	return requestAs(t, "GET", url, token, path, "")
}

func requestAs(t *testing.T, method, url, token, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// within polls ok every 50ms for at most d, and reports whether it came
// true.
func within(d time.Duration, ok func() bool) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ok() {
			return true
		}
	}
	return ok()
}

// sn serve with two tenants and scoped tokens: each token issues from its
// own templates only, and a new tokens file is read on SIGHUP, and when it
// changes without one, the old secret accepted for the grace period and
// refused after it.
func TestServeTenantsRotate(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "sn.yaml")
	tokens := filepath.Join(dir, "tokens")
	write := func(path, s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(cfgPath, `
store: {backend: bolt, path: common.db}
tenants:
  shop:    {store: {path: shop.db}}
  billing: {store: {path: billing.db}}
templates:
  order:   {template: "ORD-@<seq, width=6>", tenant: shop}
  invoice: {template: "INV-@<seq, width=6>", tenant: billing}
serve:
  tokens_file: tokens
  token_grace: 2s
  tokens:
    - {id: storefront, tenant: shop, templates: [order], actions: [issue]}
    - {id: billing, tenant: billing, actions: [issue, read, admin]}
    - {id: ops, tenant: "*", actions: [monitor]}
`)
	const (
		ops   = "ops-0123456789abcdef0123"
		shop1 = "shop-one-0123456789abcdef"
		shop2 = "shop-two-0123456789abcdef"
		shop3 = "shop-three-0123456789abcd"
		bill  = "billing-0123456789abcdef"
	)
	write(tokens, "# the shop's storefront\nstorefront="+shop1+"\nbilling="+bill+"\nops="+ops+"\n")
	s := startServe(t, nil, "--config", cfgPath)

	next := func(token, name string) int {
		st, _ := sendAs(t, s.url, token, "/v1/templates/"+name+"/next", `{"n": 1}`)
		return st
	}
	for _, c := range []struct {
		token, name string
		want        int
	}{
		{shop1, "order", 200}, {shop1, "invoice", 404}, {bill, "invoice", 200}, {bill, "order", 404}, {shop2, "order", 401},
	} {
		if got := next(c.token, c.name); got != c.want {
			t.Errorf("%s… next %s: %d, want %d", c.token[:8], c.name, got, c.want)
		}
	}

	// SIGHUP: the new secret at once, the old one for the grace period.
	write(tokens, "storefront="+shop2+"\nbilling="+bill+"\nops="+ops+"\n")
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if !within(10*time.Second, func() bool { return next(shop2, "order") == 200 }) {
		t.Fatalf("the new secret was not taken after SIGHUP: %s", s.logged())
	}
	rotated := time.Now()
	if got := next(shop1, "order"); got != 200 && time.Since(rotated) < time.Second {
		t.Errorf("the old secret right after the rotation: %d, want 200 (its grace is 2s)", got)
	}
	if !within(10*time.Second, func() bool { return next(shop1, "order") == 401 }) {
		t.Errorf("the old secret is still accepted after its grace")
	}

	// A changed file, without a signal.
	write(tokens, "storefront="+shop3+"\nbilling="+bill+"\nops="+ops+"\n")
	if !within(20*time.Second, func() bool { return next(shop3, "order") == 200 }) {
		t.Fatalf("a changed tokens file was not read: %s", s.logged())
	}

	// A bad file leaves the tokens as they were, and says why.
	write(tokens, "storefrnt="+shop1+"\n")
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if !within(10*time.Second, func() bool { return strings.Contains(s.logged(), "the old ones stay") }) {
		t.Fatalf("a bad tokens file: no error logged: %s", s.logged())
	}
	if !strings.Contains(s.logged(), "did you mean storefront?") {
		t.Errorf("the error should suggest the ID: %s", s.logged())
	}
	if got := next(shop3, "order"); got != 200 {
		t.Errorf("after a bad file, the tokens before it: %d, want 200", got)
	}
	// ...and in the metrics, for an alert: stale until a reading succeeds.
	stale := func() string {
		t.Helper()
		_, body := getAs(t, s.url, ops, "/metrics")
		for line := range strings.Lines(body) {
			if strings.HasPrefix(line, "sn_tokens_stale ") {
				return strings.TrimSpace(line)
			}
		}
		return "no sn_tokens_stale in:\n" + body
	}
	if got := stale(); got != "sn_tokens_stale 1" {
		t.Errorf("after a bad file: %s, want sn_tokens_stale 1", got)
	}
	write(tokens, "storefront="+shop3+"\nbilling="+bill+"\nops="+ops+"\n# fixed\n")
	if !within(20*time.Second, func() bool { return stale() == "sn_tokens_stale 0" }) {
		t.Errorf("after the file was fixed: %s, want sn_tokens_stale 0", stale())
	}
	if strings.Contains(s.logged(), shop1[8:]) || strings.Contains(s.logged(), bill[8:]) {
		t.Errorf("a secret was logged: %s", s.logged())
	}
}

// sn serve refuses, at start, a scope that names no template, a tenant
// that is not declared, and a secret of an unknown ID.
func TestServeScopeErrors(t *testing.T) {
	for _, c := range []struct{ serve, secrets, want string }{
		{"tokens: [{id: a, templates: [ordr], actions: [issue]}]", "a=0123456789abcdef0", `"ordr" matches none of the templates of no tenant (order); did you mean order?`},
		{"tokens: [{id: a, tenant: shp, actions: [issue]}]", "a=0123456789abcdef0", `tenant: "shp": no such tenant`},
		{"tokens: [{id: a, actions: [isue]}]", "a=0123456789abcdef0", `"isue": want issue, read, monitor or admin; did you mean issue?`},
		{"tokens: [{id: a, actions: [issue]}]", "b=0123456789abcdef0", `ID "b" is not one of serve.tokens (a)`},
		{"tokens: [{id: a, actions: [issue]}, {id: b, actions: [read]}]", "a=0123456789abcdef0", `token "b" has no secret`},
		{"tokens: [{id: a, actions: [issue]}]", "0123456789abcdef0", `want ID=SECRET`},
		{"tokens: [{id: a, action: [issue]}]", "a=0123456789abcdef0", `action: unknown field (known: actions, id, templates, tenant); did you mean actions?`},
	} {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "sn.yaml")
		os.WriteFile(cfg, []byte("store: {backend: bolt, path: sn.db}\ntenants: {shop: {store: {path: shop.db}}}\ntemplates:\n  order: {template: \"O@<seq>\"}\nserve:\n  "+c.serve+"\n"), 0o600)
		out, err := snCommand(t, []string{"SN_TOKENS=" + c.secrets}, "serve", "--config", cfg, "--listen", "127.0.0.1:0").CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%s with %s: %v\n%s\nwant it to say %s", c.serve, c.secrets, err, out, c.want)
		}
	}
}

package client_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn"
	_ "github.com/sngen/sn/backend/bolt"
	"github.com/sngen/sn/client"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/server"
	"github.com/sngen/sn/wire"
)

const token = "0123456789abcdef0123456789abcdef"

func serve(t *testing.T) *httptest.Server {
	t.Helper()
	cfg, err := config.Decode([]byte(`
store: {backend: bolt, path: sn.db}
templates:
  orders:   {template: "SN-@<seq, width=8>-@<checksum, algo=luhn>"}
  invoices: {template: "INV/@<date, format=yyyy>/@<seq, width=5, reset=year>"}
  tickets:  {template: "@<customer, chars=A-Z, maxlen=4>-@<seq>"}
`), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	set, err := cfg.Build(t.Context(), config.WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	h, err := server.New(set, server.Options{Tokens: []string{token}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

func TestClient(t *testing.T) {
	ctx := t.Context()
	ts := serve(t)
	c, err := client.New(ts.URL, client.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	orders := c.Generator("orders")
	if n, err := orders.Next(ctx); err != nil || n != "SN-00000001-8" {
		t.Errorf("Next: %q, %v", n, err)
	}
	if ns, err := orders.Issue(ctx, client.Request{N: 2}); err != nil || !cmp.Equal(ns, []string{"SN-00000002-6", "SN-00000003-4"}) {
		t.Errorf("NextN: %q, %v", ns, err)
	}
	if n, err := first(c.Generator("invoices").Issue(ctx, client.Request{At: time.Date(2023, 5, 1, 0, 0, 0, 0, time.UTC)})); err != nil || n != "INV/2023/00001" {
		t.Errorf("NextAt: %q, %v", n, err)
	}
	tickets := c.Generator("tickets")
	if n, err := first(tickets.Issue(ctx, client.Request{Vars: sn.Vars{"customer": "ACME"}})); err != nil || n != "ACME-1" {
		t.Errorf("NextWith: %q, %v", n, err)
	}
	_, err = tickets.Next(ctx)
	var e *client.Error
	if !errors.Is(err, sn.ErrVarMissing) || !errors.As(err, &e) || e.Field != "vars.customer" || e.Status != 400 {
		t.Errorf("a missing variable: %v", err)
	}
	if err := orders.Validate(ctx, "SN-00000002-6"); err != nil {
		t.Errorf("Validate a good number: %v", err)
	}
	if err := orders.Validate(ctx, "SN-00000002-7"); !errors.Is(err, sn.ErrInvalidNumber) || !errors.As(err, &e) || e.Part != "checksum" {
		t.Errorf("Validate a bad one: %v", err)
	}
	if p, err := tickets.Parse(ctx, "ACME-7"); err != nil || p.Seq != 7 || p.Vars["customer"] != "ACME" || len(p.Draws) != 1 {
		t.Errorf("Parse: %+v, %v", p, err)
	}
	if _, err := tickets.Parse(ctx, "acme-7"); !errors.Is(err, sn.ErrInvalidNumber) {
		t.Errorf("Parse a bad one: %v", err)
	}
	if ns, err := orders.Preview(ctx, client.Request{N: 2}); err != nil || len(ns) != 2 {
		t.Errorf("Preview: %q, %v", ns, err)
	}
	if tpls, err := c.Templates(ctx); err != nil || len(tpls) != 3 {
		t.Errorf("Templates: %v, %v", tpls, err)
	}
	if x, err := orders.Explain(ctx); err != nil || len(x.Parts) != 4 {
		t.Errorf("Explain: %+v, %v", x, err)
	}
	if h, err := c.Ready(ctx); err != nil || !h.Ready {
		t.Errorf("Ready: %+v, %v", h, err)
	}
	if _, err := c.Generator("nope").Next(ctx); !errors.As(err, &e) || e.Code != wire.CodeNotFound {
		t.Errorf("no such template: %v", err)
	}
	if _, err := orders.Issue(ctx, client.Request{N: sn.MaxN + 1}); !errors.Is(err, sn.ErrTooMany) {
		t.Errorf("too many: %v", err)
	}
	anon, _ := client.New(ts.URL, client.Options{})
	if _, err := anon.Generator("orders").Next(ctx); !errors.As(err, &e) || e.Code != wire.CodeUnauthorized || e.Status != 401 {
		t.Errorf("no token: %v", err)
	}
	if _, err := client.New("localhost:8080", client.Options{}); err == nil {
		t.Error("a base URL without a scheme was taken")
	}
	// Many callers at once: no number twice.
	var mu sync.Mutex
	var all []string
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				ns, err := orders.Issue(ctx, client.Request{N: 20})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				all = append(all, ns...)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(all)
	if n := len(all) - len(slices.Compact(all)); n != 0 || len(all) != 8000 {
		t.Errorf("%d numbers, %d repeats", len(all), n)
	}
	// The server gone: unavailable, as a store that does not answer.
	ts.Close()
	if _, err := orders.Next(ctx); !errors.Is(err, sequence.ErrUnavailable) {
		t.Errorf("the server gone: %v", err)
	}
}

// first returns the number of a call of Issue for one number.
func first(nums []string, err error) (string, error) {
	if len(nums) == 0 {
		return "", err
	}
	return nums[0], err
}

// A proxy's answer, not sn serve's, that says the service is down or slow
// is unavailable, which a caller may retry elsewhere; another is internal.
func TestProxyErrors(t *testing.T) {
	for status, want := range map[int]wire.Code{502: wire.CodeUnavailable, 503: wire.CodeUnavailable, 504: wire.CodeUnavailable, 500: wire.CodeInternal} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "<html>upstream down</html>", status)
		}))
		c, err := client.New(ts.URL, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Generator("orders").Next(t.Context())
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Code != want || ce.Status != status || errors.Is(err, sequence.ErrUnavailable) != (want == wire.CodeUnavailable) {
			t.Errorf("status %d: %v; want code %s", status, err, want)
		}
		ts.Close()
	}
}

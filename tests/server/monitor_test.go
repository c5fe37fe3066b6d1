package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sngen/sn"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/metrics"
	"github.com/sngen/sn/sequence/redisseq"
	"github.com/sngen/sn/sequence/snowflake"
	"github.com/sngen/sn/server"
	"github.com/sngen/sn/wire"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// startRedis serves two templates, orders on a bbolt file and tickets on
// the Redis srv, with metrics; it returns the server's URL.
func startRedis(t *testing.T, srv *redistest.Server, tokens ...string) *httptest.Server {
	t.Helper()
	// A worker id released earlier, with its bound: the server's snowflake
	// Gen takes it and issues at once (a new id waits one TTL).
	lease, err := must(redisseq.NewLeaser(srv.Client(t), redisseq.LeaserOptions{})).Lease(t.Context(), snowflake.Sonyflake, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(t.Context(), time.Now()); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Decode([]byte(`
store: {backend: bolt, path: sn.db}
templates:
  orders:  {template: "SN-@<seq, width=8>-@<checksum, algo=luhn>"}
  tickets:
    template: "T@<customer, chars=A-Z, maxlen=4>-@<seq, width=6>"
    sequence: {backend: redis, url: "redis://`+srv.Addr()+`/0"}
  ids:
    template: "ID-@<seq>"
    sequence: {backend: snowflake, url: "redis://`+srv.Addr()+`/0", layout: sonyflake}
`), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	// As sn serve: each Generator reports its calls through the
	// metrics middleware, each store is watched under its ID.
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
	s, err := server.New(set, server.Options{Tokens: tokens, Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// GET /v1/monitor shows each template's counts, blocks and keys, and the
// stores' health; a store that is down shows as down.
func TestMonitor(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	ts := startRedis(t, srv)
	for range 3 {
		if st, _ := call(t, ts, "POST", "/v1/templates/orders/next", wire.NextRequest{N: 4}, nil); st != 200 {
			t.Fatalf("next: %d", st)
		}
	}
	if st, _ := call(t, ts, "POST", "/v1/templates/tickets/next", wire.NextRequest{Vars: map[string]string{"customer": "ACME"}}, nil); st != 200 {
		t.Fatalf("next: %d", st)
	}
	if st, _ := call(t, ts, "POST", "/v1/templates/tickets/next", wire.NextRequest{}, nil); st != 400 {
		t.Fatalf("next without customer: %d", st)
	}
	for _, body := range []string{`{"n": -1}`, `{"at": "yesterday"}`, `{"n": "2"}`, `{"vars": {"customer": "ACME", "custmer": "X"}}`} {
		if st, _ := call(t, ts, "POST", "/v1/templates/tickets/next", body, nil); st != 400 {
			t.Fatalf("next with %s: %d", body, st)
		}
	}
	var mon wire.Monitor
	if st, _ := call(t, ts, "GET", "/v1/monitor", nil, &mon); st != 200 {
		t.Fatalf("GET /v1/monitor: %d", st)
	}
	if !mon.Ready || len(mon.Stores) != 3 || len(mon.Templates) != 3 {
		t.Fatalf("monitor: %+v", mon)
	}
	ids, orders, tickets := mon.Templates[0], mon.Templates[1], mon.Templates[2]
	if l := ids.Lease; ids.Blocks != nil || l == nil || !l.Leased || !l.OK || l.Valid.Before(mon.Time) {
		t.Errorf("ids, on a snowflake Gen with a lease in Redis: %+v, lease %+v", ids, l)
	}
	if orders.Name != "orders" || orders.Issued != 12 || len(orders.Keys) != 1 || orders.Blocks == nil || orders.Blocks.Fetches == 0 {
		t.Errorf("orders: %+v", orders)
	}
	if k := orders.Keys[0]; k.Last != 12 || k.Block == nil || k.Block.First > 12 || k.Block.Last < 12 || k.Step == 0 {
		t.Errorf("orders' key: %+v", k)
	}
	if tickets.Issued != 1 || tickets.Errors[wire.CodeVarMissing] != 1 || tickets.Errors[wire.CodeTooMany] != 1 || tickets.Errors[wire.CodeInstant] != 1 || tickets.Errors[wire.CodeBadRequest] != 1 || tickets.Errors[wire.CodeVarInvalid] != 1 || len(tickets.Keys) != 1 || tickets.Keys[0].Last != 1 {
		t.Errorf("tickets: %+v", tickets)
	}
	if tickets.ClientErrors != 5 || tickets.ServerErrors != 0 {
		t.Errorf("tickets: %d client errors and %d server errors, want 5 and 0", tickets.ClientErrors, tickets.ServerErrors)
	}
	// The catalogs of the stores: each template drawn from so far (the
	// snowflake Gen's in the catalog of the Redis it leases from, which
	// tickets' store shares: listed once).
	var series []string
	for _, e := range mon.Series {
		series = append(series, e.Name+": "+e.Template)
		if e.ID == "" || e.First.IsZero() || e.By == "" || e.Store == "" {
			t.Errorf("series %+v", e)
		}
	}
	slices.Sort(series)
	if want := []string{"ids: ID-@<seq>", "orders: SN-@<seq, width=8>-@<checksum, algo=luhn>", "tickets: T@<customer, chars=A-Z, maxlen=4>-@<seq, width=6>"}; !slices.Equal(series, want) {
		t.Errorf("series %q, want %q", series, want)
	}

	srv.Kill(t)
	if st, _ := call(t, ts, "GET", "/v1/monitor", nil, &mon); st != 200 || mon.Ready {
		t.Fatalf("GET /v1/monitor with Redis down: %d, ready %v", st, mon.Ready)
	}
	// The snowflake Gen still issues: its lease holds until it cannot
	// be renewed in time.
	for _, s := range mon.Stores {
		if down := strings.HasPrefix(s.Store, "redis"); s.OK == down || down != (s.Error != "") {
			t.Errorf("store %s: ok %v, error %q", s.Store, s.OK, s.Error)
		}
	}
}

// /metrics serves the registry's metrics behind the tokens, and 404
// without metrics; /monitor serves the page without a token.
func TestMetricsAndPage(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	ts := startRedis(t, srv, testToken)
	auth := []string{"Authorization", "Bearer " + testToken}
	if st, _ := call(t, ts, "POST", "/v1/templates/orders/next", wire.NextRequest{N: 7}, nil, auth...); st != 200 {
		t.Fatalf("next: %d", st)
	}
	if st, _ := call(t, ts, "GET", "/metrics", nil, nil); st != 401 {
		t.Errorf("GET /metrics without a token: %d, want 401", st)
	}
	// A request refused before the Generator (n too large) is counted too.
	if st, _ := call(t, ts, "POST", "/v1/templates/orders/next", `{"n": 100001}`, nil, auth...); st != 400 {
		t.Fatalf("next with n 100001: %d", st)
	}
	body := get(t, ts.URL+"/metrics", auth...)
	for _, want := range []string{`sn_numbers_issued_total{template="orders"} 7`, `sn_keys{store="redis redis://`, "sn_block_fetch_seconds_total", "sn_call_duration_seconds_bucket",
		`sn_errors_total{kind="too_many",template="orders"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /metrics lacks %s:\n%s", want, body)
		}
	}
	// The SVG namespace is a name, not an address the page loads.
	page := strings.ReplaceAll(get(t, ts.URL+"/monitor"), `"http://www.w3.org/2000/svg"`, "")
	if !strings.Contains(page, "<title>sn monitor</title>") || strings.Contains(page, "http://") || strings.Contains(page, "https://") || strings.Contains(page, "src=") {
		t.Errorf("the page is not one self-contained HTML file:\n%.300s", page)
	}

	plain, _ := start(t, server.Options{})
	var e wire.ErrorResponse
	if st, _ := call(t, plain, "GET", "/metrics", nil, &e); st != 404 || e.Error.Code != wire.CodeNotFound {
		t.Errorf("GET /metrics without metrics: %d %+v", st, e)
	}
}

// get returns the body of a GET of url, which must answer 200.
func get(t *testing.T, url string, header ...string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v\n%s", url, resp.StatusCode, err, b)
	}
	return string(b)
}

package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sngen/sn"
	"github.com/sngen/sn/server"
	"github.com/sngen/sn/wire"
)

// attackPage is a page of another origin that tries every way a page can
// send a POST without a CORS preflight: fetch in no-cors mode with a
// text/plain body, with no body, with a form-encoded one, sendBeacon, and
// a form submitted into a frame. Each asks for 100,000 numbers.
const attackPage = `<!doctype html><html><body>
<iframe name="sink"></iframe>
<form id="f" method="POST" enctype="text/plain" target="sink" action="{{URL}}"><input name='{"n":100000,"x":"' value='"}'></form>
<script>
(async () => {
  const url = "{{URL}}";
  const big = JSON.stringify({n: 100000});
  const tries = [
    () => fetch(url, {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: big}),
    () => fetch(url, {method: "POST", mode: "no-cors"}),
    () => fetch(url, {method: "POST", mode: "no-cors", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: big}),
    () => fetch(url, {method: "POST", mode: "no-cors", headers: {"Content-Type": "multipart/form-data; boundary=x"}, body: big}),
    () => Promise.resolve(navigator.sendBeacon(url, big)),
    () => Promise.resolve(navigator.sendBeacon(url, new Blob([big], {type: "text/plain"}))),
  ];
  for (let i = 0; i < 10; i++) {
    for (const t of tries) { try { await t(); } catch (e) {} }
  }
  document.getElementById("f").submit();
  await new Promise(r => setTimeout(r, 500));
  document.body.setAttribute("data-done", "1");
})();
</script></body></html>`

// leaky is what the server did before: it decodes any body as JSON and
// issues, whatever the Content-Type, Origin and Sec-Fetch-Site. The
// control of TestCrossSiteInBrowser.
func leaky(g *sn.Generator, issued *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req wire.NextRequest
		json.NewDecoder(r.Body).Decode(&req)
		n := max(req.N, 1)
		nums, err := g.Issue(r.Context(), sn.Request{N: n})
		if err == nil {
			issued.Add(int64(len(nums)))
		}
		w.WriteHeader(http.StatusOK)
	})
}

// A page of another origin, in a real browser, tries to draw numbers from
// a server without tokens (the documented loopback mode) in every way a
// page can POST without a CORS preflight: none is issued. The control,
// the same page against a handler without the checks, drains numbers, so
// the browser did send the requests.
func TestCrossSiteInBrowser(t *testing.T) {
	ctx := browser(t)
	if err := chromedp.Do(ctx); err != nil { // the browser starts with the test's context, not a subtest's
		t.Fatalf("starting the browser: %v", err)
	}
	for _, protected := range []bool{true, false} {
		t.Run(map[bool]string{true: "sn serve", false: "control"}[protected], func(t *testing.T) {
			ts, set := start(t, server.Options{})
			var target string
			var issued atomic.Int64
			if protected {
				target = ts.URL + "/v1/templates/orders/next"
			} else {
				g, _ := set.Get("orders")
				open := httptest.NewServer(leaky(g, &issued))
				t.Cleanup(open.Close)
				target = open.URL + "/v1/templates/orders/next"
			}
			// Another origin: localhost, not 127.0.0.1, on another port.
			attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, strings.ReplaceAll(attackPage, "{{URL}}", target))
			}))
			t.Cleanup(attacker.Close)
			page := strings.Replace(attacker.URL, "127.0.0.1", "localhost", 1)
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if err := chromedp.Do(wctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`body[data-done="1"]`))); err != nil {
				t.Fatalf("the attack page: %v", err)
			}
			var mon wire.Monitor
			if st, _ := call(t, ts, "GET", "/v1/monitor", nil, &mon); st != 200 {
				t.Fatalf("monitor: %d", st)
			}
			got := issued.Load()
			for _, tpl := range mon.Templates {
				if tpl.Name == "orders" {
					got += tpl.Issued
				}
			}
			t.Logf("numbers issued to the page of another origin: %d", got)
			switch {
			case protected && got != 0:
				t.Errorf("a page of another origin drew %d numbers", got)
			case !protected && got == 0:
				t.Error("the control drew nothing: the browser sent no request the test could see")
			}
		})
	}
}

// Without tokens, a request whose Host is not a loopback name (DNS
// rebinding: evil.example resolving to 127.0.0.1) is refused with 403;
// with tokens, the token decides.
func TestHostWithoutTokens(t *testing.T) {
	ts, _ := start(t, server.Options{})
	for _, host := range []string{"localhost", "127.0.0.1", "[::1]:8080", "localhost:8080", "app.localhost"} {
		if st, _ := call(t, ts, "GET", "/v1/templates", nil, nil, "Host", host); st != 200 {
			t.Errorf("Host %s: %d; want 200", host, st)
		}
	}
	for _, host := range []string{"evil.example", "evil.example:8080", "10.0.0.1", "localhost.evil.example", "127.0.0.1.nip.io"} {
		var e wire.ErrorResponse
		if st, _ := call(t, ts, "POST", "/v1/templates/orders/next", "{}", &e, "Host", host); st != 403 || e.Error.Code != wire.CodeForbidden {
			t.Errorf("Host %s without tokens: %d %s; want 403 forbidden", host, st, e.Error.Code)
		}
	}
	withTokens, _ := start(t, server.Options{Tokens: []string{testToken}})
	if st, _ := call(t, withTokens, "GET", "/v1/templates", nil, nil, "Host", "sn.example", "Authorization", "Bearer "+testToken); st != 200 {
		t.Errorf("Host sn.example with a token: %d; want 200", st)
	}
}

// The requests of a hostile or careless client, each answered with its
// JSON error before anything is drawn, and the headers of every answer.
func TestHostileRequests(t *testing.T) {
	ts, _ := start(t, server.Options{Tokens: []string{testToken}})
	auth := []string{"Authorization", "Bearer " + testToken}
	for _, tt := range []struct {
		name   string
		body   string
		header []string
		status int
		code   wire.Code
		field  string
	}{
		{"n of 0", `{"n": 0}`, nil, 400, wire.CodeTooMany, "n"},
		{"a field in another case", `{"N": 3}`, nil, 400, wire.CodeBadRequest, "N"},
		{"vars in another case", `{"Vars": {"customer": "ACME"}}`, nil, 400, wire.CodeBadRequest, "Vars"},
		{"text/plain", `{"n": 1}`, []string{"Content-Type", "text/plain"}, 415, wire.CodeMediaType, ""},
		{"no content type", `{"n": 1}`, []string{"Content-Type", ""}, 415, wire.CodeMediaType, ""},
		{"a cross-site browser", `{"n": 1}`, []string{"Sec-Fetch-Site", "cross-site"}, 403, wire.CodeForbidden, ""},
		{"another origin", `{"n": 1}`, []string{"Origin", "https://evil.example"}, 403, wire.CodeForbidden, ""},
		{"invalid UTF-8", "{\"vars\": {\"customer\": \"AC\xffME\"}}", nil, 400, wire.CodeBadRequest, ""},
		{"lower-case bearer", `{"n": 1}`, []string{"Authorization", "bearer " + testToken}, 200, "", ""},
		{"null", `null`, nil, 400, wire.CodeBadRequest, ""},
		{"a list", `[{"n": 1}]`, nil, 400, wire.CodeBadRequest, ""},
		{"a field twice", `{"n": 2, "n": null}`, nil, 400, wire.CodeBadRequest, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var e wire.ErrorResponse
			st, h := call(t, ts, "POST", "/v1/templates/orders/next", tt.body, &e, append(append([]string{}, auth...), tt.header...)...)
			if st != tt.status || e.Error.Code != tt.code || e.Error.Field != tt.field {
				t.Errorf("%d %s field %q (%s); want %d %s field %q", st, e.Error.Code, e.Error.Field, e.Error.Message, tt.status, tt.code, tt.field)
			}
			if h.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("X-Content-Type-Options %q", h.Get("X-Content-Type-Options"))
			}
		})
	}
	// A variable without chars= or maxlen= is printed into the number:
	// a newline, NUL or a bidi override is refused, and so is a long
	// value, before any store is asked, with a short message.
	notes, _ := startConfig(t, `
store: {backend: bolt, path: sn.db}
templates:
  notes: {template: "N-@<memo>-@<seq, key=memo>"}
`, server.Options{})
	for _, v := range []string{"A\u202eB", "A\x00B", "A\u2066B", "A\nB", "A\u200bB", "vis\u034f", "vis\ufe0f", "vis\u3164", "vis\u2800", strings.Repeat("A", 257), strings.Repeat("A", 1<<19)} {
		var e wire.ErrorResponse
		body, _ := json.Marshal(map[string]any{"vars": map[string]string{"memo": v}})
		st, _ := call(t, notes, "POST", "/v1/templates/notes/next", string(body), &e)
		if st != 400 || e.Error.Code != wire.CodeVarInvalid || len(e.Error.Message) > 400 {
			t.Errorf("memo %.20q (%d bytes): %d %s %.100q (%d bytes); want 400 var_invalid, a short message", v, len(v), st, e.Error.Code, e.Error.Message, len(e.Error.Message))
		}
	}
	// White space JSON does not know is not an empty body: 400.
	for _, body := range []string{"\f", "\v", "\u0085", "\u00a0", " \u00a0\n"} {
		var e wire.ErrorResponse
		if st, _ := call(t, notes, "POST", "/v1/templates/notes/next", body, &e); st != 400 || e.Error.Code != wire.CodeBadRequest {
			t.Errorf("body %q: %d %+v; want 400 bad_request", body, st, e)
		}
	}
	var mon wire.Monitor
	call(t, notes, "GET", "/v1/monitor", nil, &mon)
	if b, _ := json.Marshal(mon); len(b) > 10_000 || mon.Templates[0].Issued != 0 {
		t.Errorf("after the refused values: %d numbers issued, a monitor answer of %d bytes", mon.Templates[0].Issued, len(b))
	}
	// A path that is not clean is not found, not redirected (the mux
	// would answer 307 before asking for a token).
	for _, p := range []string{"//v1/templates", "/v1/./templates", "/v1/templates/", "/v1/../v1/templates"} {
		var e wire.ErrorResponse
		if st, h := call(t, ts, "GET", p, nil, &e); st != 404 || e.Error.Code != wire.CodeNotFound || h.Get("Location") != "" {
			t.Errorf("GET %s: %d %s, Location %q; want 404 not_found", p, st, e.Error.Code, h.Get("Location"))
		}
	}
	// The monitor page may not be framed.
	req, _ := http.NewRequest("GET", ts.URL+"/monitor", nil)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("/monitor headers: CSP %q, nosniff %q", csp, resp.Header.Get("X-Content-Type-Options"))
	}
}

// Counter values above 2^53 reach JavaScript exactly: parse and the
// monitor send them as JSON strings, which JSON.parse in a real browser
// keeps digit for digit. The control: the same value as a JSON number
// comes out another number.
func TestBigNumbersInBrowser(t *testing.T) {
	ctx := browser(t)
	ts, _ := startConfig(t, `
store: {backend: bolt, path: sn.db}
templates:
  big: {template: "B@<seq>", floor: 9007199254740993}
`, server.Options{})
	var out wire.NextResponse
	if st, _ := call(t, ts, "POST", "/v1/templates/big/next", "{}", &out); st != 200 || len(out.Numbers) != 1 {
		t.Fatalf("next: %d %v", st, out)
	}
	num := out.Numbers[0] // B9007199254740994
	script := fmt.Sprintf(`(async () => {
		const h = {"Content-Type": "application/json"};
		const p = await (await fetch("/v1/templates/big/parse", {method: "POST", headers: h, body: JSON.stringify({number: %q})})).json();
		const m = await (await fetch("/v1/monitor")).json();
		const k = m.templates[0].keys[0];
		return [p.seq, p.draws[0].seq, k.last, k.block.first, String(JSON.parse('{"seq": 9007199254740995}').seq)];
	})()`, num)
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/healthz")); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](script, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("the page's script: %v", err)
	}
	t.Logf("read in the browser: %q", got)
	want := []string{"9007199254740994", "9007199254740994", "9007199254740994", "9007199254740994"}
	if len(got) != 5 || !slices.Equal(got[:4], want) {
		t.Errorf("read in the browser %q; want %q", got, want)
	}
	if len(got) == 5 && got[4] == "9007199254740995" {
		t.Error("control: JSON.parse kept a number above 2^53 exactly; the test cannot see the loss")
	}
}

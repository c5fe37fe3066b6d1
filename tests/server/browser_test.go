package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"

	"github.com/chromedp/cdproto/cdp"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/wire"
)

// browser starts a headless Chromium for the test, and returns its
// context, bounded to a minute. The test fails when there is none: make
// test installs Debian's chromium.
func browser(t *testing.T) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Fatal("no chromium on this machine: the monitor page is tested in a real browser.\n" +
			"!!! Run `make test` at the repository root: it installs chromium (apt-get install chromium).")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // the tests run as root in CI
		chromedp.Flag("headless", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
	})
	return ctx
}

// The monitor page, in a real browser: it loads with only its own
// requests, asks for a token, shows a key after numbers are issued, and
// shows a store that went down.
func TestMonitorPageInBrowser(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	ts := startRedis(t, srv, testToken)
	ctx := browser(t)
	auth := []string{"Authorization", "Bearer " + testToken}

	page := watchPage(t, ctx, ts.URL)
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("the text of %s: %v", sel, err)
		}
		return s
	}
	wait := func(what string, sels ...string) {
		t.Helper()
		for _, sel := range sels {
			wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(sel)))
			cancel()
			if err != nil {
				html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("body")))
				_, thrown := page.seen()
				t.Fatalf("%s: waiting for %s: %v\nscript errors: %q\npage: %.3000s", what, sel, err, thrown, html)
			}
		}
	}

	// Without a token, the page asks for one.
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/monitor")); err != nil {
		t.Fatalf("loading the page: %v", err)
	}
	wait("without a token", "#login")
	if status := text("#status"); !strings.Contains(status, "token") {
		t.Errorf("status without a token: %q", status)
	}
	// With the token typed in, it shows both stores healthy.
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#token"), testToken),
		chromedp.Click(chromedp.CSS("#login button")),
	); err != nil {
		t.Fatalf("typing the token: %v", err)
	}
	wait("with a token", `#status[data-ready="true"]`, `#stores tr[data-ok="true"]`)

	// Numbers issued show as the key's last number within a refresh.
	for range 3 {
		if st, _ := call(t, ts, "POST", "/v1/templates/orders/next", wire.NextRequest{N: 7}, nil, auth...); st != 200 {
			t.Fatalf("next: %d", st)
		}
	}
	wait("after 21 numbers", `#keys tr[data-last="21"]`)
	if keyRow := text(`#keys tr[data-last="21"]`); !strings.Contains(keyRow, "SN-") || !strings.Contains(keyRow, "21") {
		t.Errorf("the key's row: %q", keyRow)
	}
	if tplRow := text(`#templates tr[data-template="orders"]`); !strings.Contains(tplRow, "21") {
		t.Errorf("the template's row does not count 21 numbers: %q", tplRow)
	}

	// A store that goes down shows as down, and the page as not ready.
	srv.Kill(t)
	wait("with Redis down", `#stores tr[data-ok="false"]`, `#status[data-ready="false"]`)
	if storeRow := text(`#stores tr[data-ok="false"]`); !strings.Contains(storeRow, "redis") || !strings.Contains(storeRow, "DOWN") {
		t.Errorf("the down store's row: %q", storeRow)
	}

	// The token in the URL's fragment works as well, and is taken out of
	// the address bar.
	// A new load, with the tab's stored token forgotten.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any]("sessionStorage.clear()")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(ts.URL+"/monitor#token="+url.QueryEscape(testToken))); err != nil {
		t.Fatal(err)
	}
	wait("with #token=", `#templates tr[data-template="orders"]`)
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(loc, testToken) {
		t.Errorf("the token stays in the address: %s", loc)
	}
	page.check(t)
}

// pageWatch records what a page asks of another origin than the server's
// and the exceptions its script throws.
type pageWatch struct {
	mu      sync.Mutex
	foreign []string
	thrown  []string
}

// watchPage starts recording for the browser of ctx, whose server is at
// origin.
func watchPage(t *testing.T, ctx context.Context, origin string) *pageWatch {
	t.Helper()
	w := &pageWatch{}
	if err := chromedp.Listen(ctx, func(ev any) {
		w.mu.Lock()
		defer w.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if !strings.HasPrefix(e.Request.URL, origin+"/") {
				w.foreign = append(w.foreign, e.Request.URL)
			}
		case *runtime.EventExceptionThrown:
			w.thrown = append(w.thrown, fmt.Sprintf("%s %+v", e.ExceptionDetails.Text, e.ExceptionDetails.Exception))
		}
	}); err != nil {
		t.Fatalf("starting the browser: %v", err)
	}
	return w
}

// seen returns what was recorded so far.
func (w *pageWatch) seen() (foreign, thrown []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.foreign), slices.Clone(w.thrown)
}

// check fails the test for a request to another origin or a script error.
func (w *pageWatch) check(t *testing.T) {
	t.Helper()
	foreign, thrown := w.seen()
	if len(thrown) > 0 {
		t.Errorf("the page's script threw: %q", thrown)
	}
	if len(foreign) > 0 {
		t.Errorf("the page asked for what the server does not serve: %q", foreign)
	}
}

// The monitor page opened with a token that may not read it says so, and
// offers the form for another: the server answered 403, it is not gone.
func TestMonitorPageForbidden(t *testing.T) {
	ts, _ := startScoped(t)
	ctx := browser(t)
	page := watchPage(t, ctx, ts.URL)
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/monitor#token="+url.QueryEscape(secret("shop-issue")))); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(`#status[data-answered="403"]`)), chromedp.WaitVisible(chromedp.CSS("#login"))); err != nil {
		html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("body")))
		t.Fatalf("waiting for the refusal: %v\npage: %.2000s", err, html)
	}
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#status")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(status, "this token may not read the monitor") || !strings.Contains(status, "monitor action") || strings.Contains(status, "does not answer") {
		t.Errorf("status with an issue-only token: %q", status)
	}
	page.check(t)
}

// A headless capture of the monitor, taken at the page's load event, shows
// figures, not "loading…": a request that may read the monitor (here an
// Authorization header, as a screenshot tool sends it; or a server
// without tokens) gets the page with its first reading in it. The page's
// own reading of /v1/monitor is held unanswered, so only the first can show. The
// control: the same page with the token in its fragment, which the
// server never sees, still says "loading…" at its load event.
func TestMonitorPageCapture(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	ts := startRedis(t, srv, testToken)
	capture := func(t *testing.T, header bool) string {
		ctx := browser(t)
		url := ts.URL + "/monitor"
		err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
				return err
			}
			// The page's own readings are held, never answered.
			if _, err := cdp.Call(ctx, tg, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/v1/monitor*"}}}); err != nil {
				return err
			}
			if !header {
				return nil
			}
			_, err := cdp.Call(ctx, tg, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Authorization": "Bearer " + testToken}})
			return err
		}))
		if err != nil {
			t.Fatal(err)
		}
		if !header {
			url += "#token=" + testToken
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
			t.Fatal(err)
		}
		status, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#status")))
		if err != nil {
			t.Fatal(err)
		}
		return status
	}
	if status := capture(t, true); !strings.Contains(status, "ready") || strings.Contains(status, "loading") {
		t.Errorf("the page with an Authorization header, at its load event: %q, want figures", status)
	} else {
		t.Logf("with the header: %q", status)
	}
	if status := capture(t, false); !strings.Contains(status, "loading") {
		t.Errorf("control: the page with its token in the fragment, its reading held: %q, want loading…", status)
	} else {
		t.Logf("control, the token in the fragment: %q", status)
	}
	// The data is JSON in a script element: a template's name cannot end
	// it (json.Marshal escapes <, > and &).
	req, _ := http.NewRequest("GET", ts.URL+"/monitor", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := strings.Count(string(body), "</script>"); n != 2 || !strings.Contains(string(body), `<script type="application/json" id="initial">{`) {
		t.Errorf("the page with its first reading: %d script ends\n%.2000s", n, body)
	}
}

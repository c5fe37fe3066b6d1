package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sngen/sn/server"
	"github.com/sngen/sn/wire"
)

// The monitor page's charts and capacity bars, in a real browser: the
// charts draw the numbers and errors of the last hour, the capacity bar
// of a nearly full series is red and that of a wide one is not, the
// page loads nothing from another origin, and screenshots of it are
// written for the test's output.
func TestMonitorChartsInBrowser(t *testing.T) {
	ts, _ := startConfig(t, `
store: {backend: bolt, path: sn.db, step: 5}
templates:
  orders: {template: "SN-@<seq, width=8>-@<checksum, algo=luhn>"}
  tiny:   {template: "T@<seq, width=2>", floor: 85}
  daily:  {template: "D@<date, format=yyyyMMdd>@<seq, width=3, reset=day>"}
`, server.Options{Tokens: []string{testToken}})
	auth := []string{"Authorization", "Bearer " + testToken}
	// Numbers, and errors of both kinds: a bad variable (4xx) and tiny
	// overflowing its width (409, a 4xx too: the request cannot be met).
	for range 3 {
		for _, name := range []string{"orders", "daily"} {
			if st, _ := call(t, ts, "POST", "/v1/templates/"+name+"/next", wire.NextRequest{N: 40}, nil, auth...); st != 200 {
				t.Fatalf("next %s: %d", name, st)
			}
		}
		call(t, ts, "POST", "/v1/templates/orders/next", wire.NextRequest{N: 1, Vars: map[string]string{"nope": "1"}}, nil, auth...)
	}
	if st, _ := call(t, ts, "POST", "/v1/templates/tiny/next", wire.NextRequest{N: 10}, nil, auth...); st != 200 {
		t.Fatalf("next tiny: %d", st)
	}

	var mon wire.Monitor
	call(t, ts, "GET", "/v1/monitor", nil, &mon, auth...)
	caps := map[string]*wire.Capacity{}
	for _, mt := range mon.Templates {
		caps[mt.Name] = mt.Capacity
		if h := mt.History; h == nil || len(h.Issued) == 0 {
			t.Errorf("%s: no history: %+v", mt.Name, h)
		}
	}
	if c := caps["tiny"]; c == nil || !c.Warn || c.Last != 95 || c.Max != 99 {
		t.Errorf("tiny's capacity: %+v; want 95 of 99, a warning", c)
	}
	if c := caps["orders"]; c == nil || c.Warn || c.Max != 99999999 || c.PeriodEnd != nil {
		t.Errorf("orders' capacity: %+v; want no warning, no period", c)
	}
	if c := caps["daily"]; c == nil || c.PeriodEnd == nil || !c.PeriodEnd.After(time.Now()) || c.PeriodEnd.After(time.Now().Add(24*time.Hour)) {
		t.Errorf("daily's capacity: %+v; want its period to end within a day", c)
	}

	ctx := browser(t)
	page := watchPage(t, ctx, ts.URL)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 1000), chromedp.Navigate(ts.URL+"/monitor#token="+testToken)); err != nil {
		t.Fatalf("loading the page: %v", err)
	}
	for _, sel := range []string{
		`.card[data-template="orders"] figure[data-chart="numbers"] polyline[data-series="by next"]`,
		`.card[data-template="orders"] figure[data-chart="errors"] polyline[data-series="client errors (4xx)"]`,
		`.card[data-template="orders"] figure[data-chart="fetch"] polyline`,
		`.cap[data-template="tiny"][data-warn="true"]`,
		`.cap[data-template="orders"][data-warn="false"]`,
	} {
		wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(sel)))
		cancel()
		if err != nil {
			_, thrown := page.seen()
			t.Fatalf("waiting for %s: %v\nscript errors: %q", sel, err, thrown)
		}
	}
	// The line of numbers issued is drawn from points, and rises above the
	// axis; the bars are red and green.
	points, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('.card[data-template="orders"] figure[data-chart="numbers"] polyline[data-series="by next"]').getAttribute("points")`))
	if err != nil || points == "" {
		t.Errorf("the numbers line: %q %v", points, err)
	}
	colors, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.cap')].map(b => b.dataset.template + " " + getComputedStyle(b.firstChild).backgroundColor)`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"tiny": "rgb(198, 40, 40)", "orders": "rgb(47, 125, 50)"}
	for _, c := range colors {
		name, color, _ := strings.Cut(c, " ")
		if w, ok := want[name]; ok && color != w {
			t.Errorf("the capacity bar of %s is %s, want %s", name, color, w)
		}
	}
	units, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`.card[data-template="orders"]`)))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"numbers/s", "requests/s", "ms", "calls/s", "% of the width used"} {
		if !strings.Contains(units, u) {
			t.Errorf("the card of orders does not say %q:\n%s", u, units)
		}
	}

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := os.Getenv("SN_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "sn-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "monitor-charts.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the monitor page: %s (%d bytes)", shot, len(png))
	page.check(t)
}

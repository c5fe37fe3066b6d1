package server_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sngen/sn/server"
)

// TestAdvHostile: hostile bodies to /void and hostile Idempotency-Key
// headers to /next: never a 5xx, never a panic; one key, many concurrent
// calls: one answer.
func TestAdvHostile(t *testing.T) {
	ts, _ := start(t, server.Options{})
	raw := func(method, path, body string, hdr http.Header) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), method, ts.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header[k] = v
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// Issue a few so marks exist.
	for _, tpl := range []string{"orders", "tiny", "tickets", "invoices"} {
		body := `{}`
		if tpl == "tickets" {
			body = `{"vars":{"customer":"AB"}}`
		}
		if c, b := raw("POST", "/v1/templates/"+tpl+"/next", body, nil); c != 200 {
			t.Logf("%s next: %d %s", tpl, c, b)
		}
	}
	voids := []string{
		`{"number":"T9","reason":"x"}`,
		`{"number":"T99999999999999999999999","reason":"x"}`,
		`{"number":"T-1","reason":"x"}`,
		`{"number":"T0","reason":"x"}`,
		`{"number":"SN-00000001-` + "\u0000" + `","reason":"x"}`,
		`{"number":"` + strings.Repeat("9", 100000) + `","reason":"x"}`,
		`{"number":"AB-1","reason":"` + strings.Repeat("é", 600) + `"}`,
		`{"number":"AB-1","reason":"\ud800"}`,
		`{"number":"ZZZZZ-1","reason":"x"}`,
		`{"number":"AB-9223372036854775807","reason":"x"}`,
		`{"number":"AB-9223372036854775808","reason":"x"}`,
		`{"number":"INV/9999/00001","reason":"x"}`,
		`{"number":"INV/0000/00001","reason":"x"}`,
		`{"number":null,"reason":"x"}`,
		`{"number":["a"],"reason":"x"}`,
		`{"number":"T1","reason":"x","extra":1}`,
		`[]`, `null`, `"x"`, ``, `{"number":"T1","reason":"x"}{"a":1}`,
	}
	for _, tpl := range []string{"orders", "tiny", "tickets", "invoices", "nope"} {
		for _, v := range voids {
			c, b := raw("POST", "/v1/templates/"+tpl+"/void", v, http.Header{"Idempotency-Key": {"k"}})
			if c >= 500 {
				t.Errorf("void %s %.80s: %d %s", tpl, v, c, b)
			}
		}
	}
	keys := [][]string{
		{""}, {" "}, {"a b"}, {"a", "b"}, {strings.Repeat("k", 255)}, {strings.Repeat("k", 256)},
		{"ü"},
	}
	for _, k := range keys {
		c, b := raw("POST", "/v1/templates/orders/next", `{"n":2}`, http.Header{"Idempotency-Key": k})
		if c >= 500 {
			t.Errorf("key %q: %d %s", k, c, b)
		}
		c, b = raw("POST", "/v1/templates/orders/next?preview=1", `{"n":2}`, http.Header{"Idempotency-Key": k})
		if c >= 500 {
			t.Errorf("preview key %q: %d %s", k, c, b)
		}
	}
	// Same key, different bodies: one 200, the others 422.
	c1, b1 := raw("POST", "/v1/templates/tickets/next", `{"vars":{"customer":"AB"}}`, http.Header{"Idempotency-Key": {"same"}})
	c2, b2 := raw("POST", "/v1/templates/tickets/next", `{"vars":{"customer":"AC"}}`, http.Header{"Idempotency-Key": {"same"}})
	c3, b3 := raw("POST", "/v1/templates/tickets/next", `{"vars":{"customer":"AB"},"n":1}`, http.Header{"Idempotency-Key": {"same"}})
	t.Logf("%d %s | %d %s | %d %s", c1, b1, c2, b2, c3, b3)
	if c2 == 200 || c3 != 200 || b3 != b1 {
		t.Errorf("same key: %d %s / %d %s / %d %s", c1, b1, c2, b2, c3, b3)
	}
	// Concurrent same key: the 200s all carry one answer.
	var mu sync.Mutex
	answers := map[string]int{}
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			c, b := raw("POST", "/v1/templates/orders/next", `{"n":3}`, http.Header{"Idempotency-Key": {"burst"}})
			mu.Lock()
			defer mu.Unlock()
			if c == 200 {
				answers[b]++
			} else if c >= 500 {
				t.Errorf("burst: %d %s", c, b)
			}
		})
	}
	wg.Wait()
	if len(answers) > 1 {
		t.Errorf("one key, %d answers: %v", len(answers), answers)
	}
	_ = bytes.MinRead
}

// Package servertest serves a config's Set with package server on
// 127.0.0.1, for the tests of package server and of module tests (its
// browser, Prometheus and Redis tests).
package servertest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	_ "github.com/sngen/sn/backend/bolt" // the store of Start
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/server"
)

// Token is a token of 32 characters, for the Options of a test server.
const Token = "0123456789abcdef0123456789abcdef"

// Start serves a Set of a few templates on a bbolt file, on 127.0.0.1:
// orders, invoices (a yearly reset), tickets (a customer variable) and tiny
// (one digit, floor 8). The end of the test closes both.
func Start(t *testing.T, opts server.Options) (*httptest.Server, *config.Set) {
	t.Helper()
	return StartConfig(t, `
store: {backend: bolt, path: sn.db}
templates:
  orders:   {template: "SN-@<seq, width=8>-@<checksum, algo=luhn>"}
  invoices: {template: "INV/@<date, format=yyyy>/@<seq, width=5, reset=year>"}
  tickets:  {template: "@<customer, chars=A-Z, maxlen=4>-@<seq>"}
  tiny:     {template: "T@<seq, width=1>", floor: 8}
`, opts)
}

// StartConfig serves the Set of a config (YAML), built in a temporary
// directory, on 127.0.0.1.
func StartConfig(t *testing.T, yaml string, opts server.Options) (*httptest.Server, *config.Set) {
	t.Helper()
	cfg, err := config.Decode([]byte(yaml), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	set, err := cfg.Build(t.Context(), config.WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	s, err := server.New(set, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts, set
}

// Call sends a request with body (JSON-encoded unless a string) and
// header (name, value pairs; "Host" sets the host of the request), checks
// that the answer is JSON and decodes it into out; it returns the status
// and the header.
func Call(t *testing.T, ts *httptest.Server, method, path string, body any, out any, header ...string) (int, http.Header) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, ts.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if method == "POST" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q, body %s", method, path, ct, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, data)
		}
	}
	return resp.StatusCode, resp.Header
}

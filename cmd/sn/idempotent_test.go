package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/internal/redistest"
)

// keyed posts a request for n numbers of template name with an
// Idempotency-Key, and returns the status and the numbers (or the body).
func keyed(t *testing.T, url, name, key string, n int) (int, []string, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url+"/v1/templates/"+name+"/next", strings.NewReader(fmt.Sprintf(`{"n": %d}`, n)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var out struct {
		Numbers []string `json:"numbers"`
	}
	_ = json.Unmarshal(body, &out)
	return resp.StatusCode, out.Numbers, string(body)
}

// TestServeIdempotencyReplicas: two sn serve processes share one store, a
// rolling deploy between them (one serves width=6, the other width=8, an
// edit the catalog continues as the same series). A request retried
// through the other replica with its Idempotency-Key gets the numbers the
// first was given, printed as they were; the same key with another
// request is refused. On Redis alone (no ledger) and on the SQL ledger.
// The control: a new key through the other replica gets new numbers.
func TestServeIdempotencyReplicas(t *testing.T) {
	stores := map[string]func(t *testing.T) string{
		"redis-alone": func(t *testing.T) string {
			return fmt.Sprintf("{backend: redis, url: \"redis://%s/0\"}", redistest.Start(t, redistest.Persistent()).Addr())
		},
		"sql": func(t *testing.T) string {
			return fmt.Sprintf("{backend: sql, ledger: %q, step: 20}", pgtest.Shared(t).NewDatabase(t))
		},
	}
	for name, store := range stores {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			st := store(t)
			config := func(file string, width int) string {
				return writeConfig(t, dir, file, fmt.Sprintf("store: %s\ntemplates:\n  orders: {template: \"SN@<seq, width=%d>\"}\n", st, width))
			}
			a := startServe(t, nil, "--config", config("a.yaml", 6))
			b := startServe(t, nil, "--config", config("b.yaml", 8))

			code, first, body := keyed(t, a.url, "orders", "order-4711", 3)
			if code != 200 || len(first) != 3 {
				t.Fatalf("the first call: %d %s", code, body)
			}
			code, again, body := keyed(t, b.url, "orders", "order-4711", 3)
			if code != 200 || strings.Join(again, ",") != strings.Join(first, ",") {
				t.Errorf("the retry through the other replica (width=8): %d %v %s, want the first answer %v", code, again, body, first)
			}
			if code, _, body := keyed(t, b.url, "orders", "order-4711", 4); code != 422 && code != 409 {
				t.Errorf("the key with another request: %d %s, want it refused", code, body)
			}
			code, fresh, body := keyed(t, b.url, "orders", "order-4712", 3)
			if code != 200 || len(fresh) != 3 || fresh[0] == first[0] {
				t.Errorf("control: a new key through the other replica: %d %v %s", code, fresh, body)
			}
			t.Logf("%s: first %v through width=6, the retry %v through width=8, a new key %v", name, first, again, fresh)
		})
	}
}

// TestServeIdempotencySnowflake: snowflake ids whose workers two sn serve
// replicas lease from one Redis keep their idempotency keys there, beside
// the leases: a retry through the other replica gets the id the first was
// given. The control: a new key gets a new id.
func TestServeIdempotencySnowflake(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "sn.yaml", fmt.Sprintf("templates:\n  ids: {template: \"ID@<seq>\", sequence: {backend: snowflake, url: \"redis://%s/0\"}}\n", redistest.Start(t, redistest.Persistent()).Addr()))
	a, b := startServe(t, nil, "--config", cfg), startServe(t, nil, "--config", cfg)
	code, first, body := keyed(t, a.url, "ids", "k1", 1)
	if code != 200 || len(first) != 1 {
		t.Fatalf("the first call: %d %s", code, body)
	}
	if code, again, body := keyed(t, b.url, "ids", "k1", 1); code != 200 || !slices.Equal(again, first) {
		t.Errorf("the retry through the other replica: %d %v %s, want %v", code, again, body, first)
	}
	if code, fresh, body := keyed(t, b.url, "ids", "k2", 1); code != 200 || len(fresh) != 1 || fresh[0] == first[0] {
		t.Errorf("control: a new key: %d %v %s", code, fresh, body)
	}
}

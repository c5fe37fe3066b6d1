package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sngen/sn/internal/pgtest"
)

// The tokens of the gapless tests: app may issue (and read), admin may
// administer (and read).
const (
	app   = "app-token-0123456789abcdef"
	admin = "admin-token-0123456789abcd"
)

// gaplessConfig writes a config of the templates given (YAML lines under
// templates:) on a new PostgreSQL ledger, served with the tokens app and
// admin, and returns the ledger, the config's directory and its path.
func gaplessConfig(t *testing.T, templates string) (dsn, dir, cfg string) {
	t.Helper()
	dsn = pgtest.Shared(t).NewDatabase(t)
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokens"), []byte("app="+app+"\nadmin="+admin+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg = writeConfig(t, dir, "sn.yaml", fmt.Sprintf("store: {backend: sql, ledger: %q}\ntemplates:\n%sserve:\n  tokens_file: tokens\n  tokens:\n    - {id: app, actions: [issue, read]}\n    - {id: admin, actions: [admin, read]}\n", dsn, templates))
	return dsn, dir, cfg
}

// gaplessRun is what the clients of TestServeGapless saw.
type gaplessRun struct {
	mu        sync.Mutex
	owner     map[int64]string // every number a client was given (drawn or held), by the logical request's key
	voided    map[int64]bool
	repeats   int   // numbers given for two logical requests
	retries   int64 // attempts after the first, of all requests
	abandoned int64 // attempts cut off by the client ("killed")
}

func (g *gaplessRun) given(t *testing.T, n int64, key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if k, ok := g.owner[n]; ok && k != key {
		g.repeats++
		t.Errorf("%d given to %s and to %s", n, k, key)
	}
	g.owner[n] = key
}

// gaps returns the numbers from 1 to the highest given that no client was
// given.
func (g *gaplessRun) gaps() (top int64, missing int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for n := range g.owner {
		top = max(top, n)
	}
	for n := int64(1); n <= top; n++ {
		if _, ok := g.owner[n]; !ok {
			missing++
		}
	}
	return top, missing
}

// replicas are the sn serve processes of a test, which a restart replaces.
type replicas struct {
	mu   sync.Mutex
	list []*serving
}

func (r *replicas) pick(rng *rand.Rand) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.list[rng.IntN(len(r.list))].url
}

// attempt posts body to path of one replica with token and key, within
// d, and returns the status and the body; status 0 for no answer.
func attempt(url, token, path, key, body string, d time.Duration) (int, []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", url+path, strings.NewReader(body))
	if err != nil {
		return 0, nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil
	}
	return resp.StatusCode, b
}

// sn serve issues gapless invoice numbers (profile: gapless on a
// PostgreSQL ledger) to 12 concurrent HTTP clients through two replicas.
// Each logical request has an Idempotency-Key its client retries on any
// failure; a quarter of the attempts are cut off by their client after 1
// to 40 ms (a client killed mid-request, coming back with its key). Half
// the requests draw one to three numbers (next); the others hold one,
// then commit it or, one in four, void it (with an issue-only token: the
// void of a hold). Meanwhile one replica is killed (SIGKILL) and started
// again, and the other is stopped (SIGSTOP) for 2.5 s, past its clients'
// deadlines, holding a transaction, and continued.
//
// The numbers the clients were given are exactly 1..N, each for one
// logical request, and sn gaps explains all of them (issued or void,
// none lapsed or missing). The control, 4 more clients issuing from a
// template of the same ledger served from blocks (no profile), sees
// numbers missing after the kill.
func TestServeGapless(t *testing.T) {
	_, _, cfg := gaplessConfig(t, `  invoices: {template: "INV-@<seq, width=6>", profile: gapless}
  orders:   {template: "ORD-@<seq, width=6>", sequence: {step: 20}}
`)
	rs := &replicas{list: []*serving{startServe(t, nil, "--config", cfg), startServe(t, nil, "--config", cfg)}}

	invoices := &gaplessRun{owner: map[int64]string{}, voided: map[int64]bool{}}
	orders := &gaplessRun{owner: map[int64]string{}, voided: map[int64]bool{}}
	var stop atomic.Bool
	var wg sync.WaitGroup
	// send retries one logical request until it is answered 200, or
	// answered a refusal that finished says is the end of it.
	send := func(run *gaplessRun, rng *rand.Rand, path, key, body string, finished func(status int, b []byte) bool) ([]byte, bool) {
		deadline := time.Now().Add(90 * time.Second)
		for try := 0; time.Now().Before(deadline); try++ {
			if try > 0 {
				atomic.AddInt64(&run.retries, 1)
			}
			d := 2 * time.Second
			if rng.IntN(4) == 0 {
				d = time.Duration(1+rng.IntN(40)) * time.Millisecond
				atomic.AddInt64(&run.abandoned, 1)
			}
			st, b := attempt(rs.pick(rng), app, path, key, body, d)
			switch {
			case st == 200:
				return b, true
			case st == 0 || st == 503 || st == 409 || st == 499:
				time.Sleep(time.Duration(5+rng.IntN(20)) * time.Millisecond)
			case finished != nil && finished(st, b):
				return b, false
			default:
				t.Errorf("%s %s: %d %s", path, key, st, b)
				return nil, false
			}
		}
		t.Errorf("%s %s: no answer within 90 s", path, key)
		return nil, false
	}
	number := func(s string) int64 {
		n, err := strconv.ParseInt(s[strings.LastIndexByte(s, '-')+1:], 10, 64)
		if err != nil {
			t.Errorf("%q: %v", s, err)
		}
		return n
	}
	worker := func(w int, name string, run *gaplessRun, holds bool) {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(uint64(w), 36))
		for i := 0; !stop.Load(); i++ {
			key := fmt.Sprintf("%s-w%d-%d", name, w, i)
			if !holds || rng.IntN(2) == 0 {
				k := key
				if !holds {
					// The control's requests carry no key: an attempt
					// cut off after its claim would hold the key for the
					// claim's lease (30 s), and the numbers it lost are
					// what the control counts.
					k = ""
				}
				b, ok := send(run, rng, "/v1/templates/"+name+"/next", k, fmt.Sprintf(`{"n": %d}`, 1+rng.IntN(3)), nil)
				if !ok {
					return
				}
				var out struct{ Numbers []string }
				json.Unmarshal(b, &out)
				for _, s := range out.Numbers {
					run.given(t, number(s), key)
				}
				continue
			}
			b, ok := send(run, rng, "/v1/templates/"+name+"/hold", key, `{"ttl": "1h"}`, nil)
			if !ok {
				return
			}
			var h struct{ Number string }
			json.Unmarshal(b, &h)
			n := number(h.Number)
			run.given(t, n, key)
			op, body := "/commit", fmt.Sprintf(`{"number": %q}`, h.Number)
			void := rng.IntN(4) == 0
			if void {
				op, body = "/void", fmt.Sprintf(`{"number": %q, "reason": "draft abandoned"}`, h.Number)
			}
			// A commit or void retried after its answer was lost finds
			// the number no longer held: done by the first attempt.
			notHeld := func(st int, b []byte) bool { return st == 400 && bytes.Contains(b, []byte("not held")) }
			_, done := send(run, rng, "/v1/templates/"+name+op, "", body, notHeld)
			_ = done
			if void {
				run.mu.Lock()
				run.voided[n] = true
				run.mu.Unlock()
			}
		}
	}
	for w := range 12 {
		wg.Add(1)
		go worker(w, "invoices", invoices, true)
	}
	for w := range 4 {
		wg.Add(1)
		go worker(100+w, "orders", orders, false)
	}

	time.Sleep(2 * time.Second)
	// kill -9 one replica, and start it again.
	rs.mu.Lock()
	victim := rs.list[0]
	rs.list = rs.list[1:]
	rs.mu.Unlock()
	victim.cmd.Process.Kill()
	<-victim.done
	fresh := startServe(t, nil, "--config", cfg)
	rs.mu.Lock()
	rs.list = append(rs.list, fresh)
	rs.mu.Unlock()
	time.Sleep(1500 * time.Millisecond)
	// SIGSTOP the other past its clients' deadlines (2 s an attempt),
	// then SIGCONT.
	rs.mu.Lock()
	stopped := rs.list[0]
	rs.mu.Unlock()
	stopped.cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(2500 * time.Millisecond)
	stopped.cmd.Process.Signal(syscall.SIGCONT)
	// Then until 150 invoice numbers at least were given (a busy machine
	// gives fewer by then), for at most 60 s.
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if top, _ := invoices.gaps(); top >= 150 {
			break
		}
	}
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()

	top, missing := invoices.gaps()
	t.Logf("invoices: 1..%d given, %d voided, %d missing, %d repeats; %d retries, %d attempts cut off by their client",
		top, len(invoices.voided), missing, invoices.repeats, invoices.retries, invoices.abandoned)
	if invoices.repeats != 0 || missing != 0 || top < 100 {
		t.Errorf("invoices: %d repeats, %d missing of 1..%d", invoices.repeats, missing, top)
	}
	otop, omissing := orders.gaps()
	t.Logf("control, orders from blocks: 1..%d given, %d missing, %d repeats", otop, omissing, orders.repeats)
	if omissing == 0 {
		t.Errorf("control: the orders served from blocks lost no number to the kill: the test cannot tell")
	}
	if orders.repeats != 0 {
		t.Errorf("control: %d orders repeated", orders.repeats)
	}

	// sn gaps explains every invoice number: issued or void.
	r := runSN(t, "", nil, "gaps", "--config", cfg, "invoices", "--all")
	if r.code != 0 {
		t.Fatalf("sn gaps: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	counts := map[string]int64{}
	for _, sp := range gapSpans(r.stdout) {
		counts[sp.state] += sp.last - sp.first + 1
	}
	voided := int64(len(invoices.voided))
	if counts["void"] != voided || counts["issued"] != top-voided || len(counts) != 2 {
		t.Errorf("sn gaps: %v, want %d issued and %d void\n%s", counts, top-voided, voided, r.stdout)
	}
	t.Logf("sn gaps: %v", counts)
}

// The scopes of a gapless template's routes: a token that may issue
// holds, commits and voids its holds, and may not void a committed
// number; a token that may administer voids it. A template served from
// blocks holds nothing (501), and an issue-only token may not void its
// numbers (403).
func TestServeGaplessScopes(t *testing.T) {
	dsn, dir, cfg := gaplessConfig(t, `  invoices: {template: "INV-@<date, format=yyyy>-@<seq, width=6, reset=year>", profile: gapless}
  orders:   {template: "ORD-@<seq, width=6>"}
`)
	s := startServe(t, nil, "--config", cfg)
	post := func(token, path, body string) (int, string) {
		return sendAs(t, s.url, token, path, body)
	}
	var h struct {
		Number   string
		Deadline time.Time
	}
	st, body := post(app, "/v1/templates/invoices/hold", `{"ttl": "15m", "at": "2026-05-01T10:00:00Z"}`)
	json.Unmarshal([]byte(body), &h)
	if st != 200 || h.Number != "INV-2026-000001" || time.Until(h.Deadline) < 10*time.Minute {
		t.Fatalf("hold: %d %s", st, body)
	}
	for _, c := range []struct {
		token, path, body string
		want              int
		says              string
	}{
		{app, "/v1/templates/invoices/commit", fmt.Sprintf(`{"number": %q}`, h.Number), 200, `"committed":true`},
		{app, "/v1/templates/invoices/commit", fmt.Sprintf(`{"number": %q}`, h.Number), 400, "not held"},
		{app, "/v1/templates/invoices/void", fmt.Sprintf(`{"number": %q, "reason": "oops"}`, h.Number), 400, "admin action voids any"},
		{admin, "/v1/templates/invoices/hold", `{"ttl": "15m"}`, 403, "may not issue"},
		{app, "/v1/templates/invoices/hold", `{"ttl": "100d"}`, 400, "ttl"},
		{app, "/v1/templates/invoices/hold", `{}`, 400, "ttl"},
		{app, "/v1/templates/invoices/commit", `{"number": "INV-2026-00000X"}`, 422, "invalid_number"},
		{app, "/v1/templates/orders/hold", `{"ttl": "15m"}`, 501, "holds no numbers"},
		{app, "/v1/templates/orders/void", `{"number": "ORD-000001", "reason": "x"}`, 403, "admin"},
		{admin, "/v1/templates/invoices/void", fmt.Sprintf(`{"number": %q, "reason": "cancelled: credit note"}`, h.Number), 200, `"void":true`},
	} {
		st, body := post(c.token, c.path, c.body)
		if st != c.want || !strings.Contains(body, c.says) {
			t.Errorf("%s %s %s: %d %s, want %d saying %q", c.token[:3], c.path, c.body, st, body, c.want, c.says)
		}
	}
	// A hold voided by the token that may only issue.
	st, body = post(app, "/v1/templates/invoices/hold", `{"ttl": "15m", "at": "2026-05-01T10:00:00Z"}`)
	json.Unmarshal([]byte(body), &h)
	if st != 200 || h.Number != "INV-2026-000002" {
		t.Fatalf("hold: %d %s", st, body)
	}
	if st, body := post(app, "/v1/templates/invoices/void", fmt.Sprintf(`{"number": %q, "reason": "draft abandoned"}`, h.Number)); st != 200 {
		t.Errorf("void of a hold with the issue token: %d %s", st, body)
	}
	// Next draws in a transaction of its own per request.
	if st, body := post(app, "/v1/templates/invoices/next", `{"n": 2, "at": "2026-05-01T10:00:00Z"}`); st != 200 || !strings.Contains(body, "INV-2026-000003") || !strings.Contains(body, "INV-2026-000004") {
		t.Errorf("next: %d %s", st, body)
	}
	// A remote client gets no block of a gapless series: its numbers
	// would be gaps when the client dies.
	if st, body := post(app, "/v1/templates/invoices/blocks", `{"key": "x", "n": 10, "template": "t", "engine": "e", "now": "2026-05-01T10:00:00Z"}`); st < 400 || st >= 500 && st != 501 {
		t.Errorf("blocks of a gapless template: %d %s", st, body)
	}
	// The sn command draws a gapless template's numbers in a transaction
	// per chunk, after those the server drew.
	r := runSN(t, "", nil, "next", "--config", cfg, "invoices", "--at", "2026-05-01", "-n", "2")
	if r.code != 0 || r.stdout != "INV-2026-000005\nINV-2026-000006\n" {
		t.Errorf("sn next of the gapless template: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	// Redis in front of the ledger, or the strict counter, cannot serve
	// the profile: refused at start, naming the backend.
	for _, backend := range []string{"redis", "redis-strict"} {
		bad := writeConfig(t, dir, backend+".yaml", fmt.Sprintf("store: {backend: %s, url: \"redis://127.0.0.1:1/0\", ledger: %q}\ntemplates:\n  invoices: {template: \"INV-@<seq, width=6>\", profile: gapless}\n", backend, dsn))
		r := runSN(t, "", nil, "next", "--config", bad, "invoices")
		if r.code == 0 || !strings.Contains(r.stderr, "backend "+backend+" issues from blocks") {
			t.Errorf("gapless on %s: exit %d %s", backend, r.code, r.stderr)
		}
	}
	r = runSN(t, "", nil, "gaps", "--config", cfg, "invoices", "--at", "2026-05", "--all")
	if r.code != 0 || !strings.Contains(r.stdout, "draft abandoned") || !strings.Contains(r.stdout, "cancelled: credit note") {
		t.Errorf("sn gaps: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sngen/sn/client"
	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/wire"
)

// serving is a running sn serve.
type serving struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{} // closed when the process has exited
	mu   sync.Mutex
	log  *bytes.Buffer // under mu
}

// logged returns what sn serve has logged so far.
func (s *serving) logged() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

var listening = regexp.MustCompile(`url=(https?://127\.0\.0\.1:\d+)`)

// startServe starts sn serve on a free loopback port and waits until it
// is ready.
func startServe(t *testing.T, env []string, args ...string) *serving {
	t.Helper()
	return startServeWith(t, http.DefaultClient, env, args...)
}

// startServeWith is startServe, asking whether sn serve is ready with
// client.
func startServeWith(t *testing.T, client *http.Client, env []string, args ...string) *serving {
	t.Helper()
	cmd := snCommand(t, env, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &serving{cmd: cmd, done: make(chan struct{}), log: new(bytes.Buffer)}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.mu.Lock()
			s.log.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-s.done
	})
	select {
	case s.url = <-found:
	case <-s.done:
		t.Fatalf("sn serve exited: %s", s.logged())
	case <-time.After(20 * time.Second):
		t.Fatalf("sn serve did not listen within 20s: %s", s.logged())
	}
	// Ready takes a snowflake worker id's first TTL (10 s) at least, and
	// more on a busy machine: wait for at most 60 s.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := client.Get(s.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("sn serve not ready within 60s: %v", err)
		}
	}
}

// issue asks for n numbers of template name; it returns nil and the
// error for a failed request.
func issue(client *http.Client, url, name string, n int) ([]string, error) {
	resp, err := client.Post(url+"/v1/templates/"+name+"/next", "application/json", strings.NewReader(fmt.Sprintf(`{"n": %d}`, n)))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	var out struct{ Numbers []string }
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, err
	}
	if len(out.Numbers) != n {
		return nil, fmt.Errorf("%d numbers, want %d", len(out.Numbers), n)
	}
	return out.Numbers, nil
}

// sn serve is stopped under load, gracefully (SIGTERM) and not (SIGKILL),
// and started again on the same store: no number that reached a client
// repeats, and every request that was answered before SIGTERM's shutdown
// got its numbers.
func TestServeRestarts(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "sn.yaml", "store: {backend: bolt, path: sn.db}\ntemplates:\n  orders: {template: \"SN@<seq, width=10>\"}\n")
	var all []string
	var mu sync.Mutex
	graceful := 0
	for round, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL, syscall.SIGTERM, syscall.SIGKILL, syscall.SIGTERM} {
		s := startServe(t, nil, "--config", cfg)
		var stop atomic.Bool
		var wg sync.WaitGroup
		var answered, failed atomic.Int64
		for c := range 4 {
			rnd := rand.New(rand.NewPCG(uint64(round), uint64(c)))
			wg.Go(func() {
				client := &http.Client{Timeout: 10 * time.Second}
				for i := 0; i < 100000 && !stop.Load(); i++ {
					nums, err := issue(client, s.url, "orders", 1+rnd.IntN(50))
					if err != nil {
						failed.Add(1)
						continue
					}
					answered.Add(1)
					mu.Lock()
					all = append(all, nums...)
					mu.Unlock()
				}
			})
		}
		time.Sleep(300 * time.Millisecond)
		s.cmd.Process.Signal(sig)
		select {
		case <-s.done:
		case <-time.After(40 * time.Second):
			t.Fatalf("round %d: sn serve did not stop after %v", round, sig)
		}
		stop.Store(true)
		wg.Wait()
		if sig == syscall.SIGTERM {
			graceful++
			if code := s.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("round %d: exit %d after SIGTERM; log:\n%s", round, code, s.logged())
			}
		}
		if answered.Load() == 0 {
			t.Fatalf("round %d: no request answered; log:\n%s", round, s.logged())
		}
		t.Logf("round %d (%v): %d requests answered, %d failed as the server went away", round, sig, answered.Load(), failed.Load())
	}
	sorted := slices.Clone(all)
	slices.Sort(sorted)
	repeats := len(sorted) - len(slices.Compact(sorted))
	if repeats != 0 {
		t.Errorf("%d repeats in %d numbers", repeats, len(all))
	}
	t.Logf("%d numbers over 5 runs of sn serve (%d stopped by SIGTERM, the others by SIGKILL), %d repeats", len(all), graceful, repeats)
}

func TestServeRefuses(t *testing.T) {
	dir := t.TempDir()
	mem := writeConfig(t, dir, "mem.yaml", "store: {backend: memory}\ntemplates:\n  a: {template: \"A@<seq>\"}\n")
	bolt := writeConfig(t, dir, "bolt.yaml", "store: {backend: bolt, path: sn.db}\ntemplates:\n  a: {template: \"A@<seq>\"}\n")
	noFile := writeConfig(t, dir, "nofile.yaml", "store: {backend: bolt, path: sn.db}\ntemplates:\n  a: {template: \"A@<seq>\"}\nserve: {tokens_file: missing.txt}\n")
	badTLS := writeConfig(t, dir, "badtls.yaml", "store: {backend: bolt, path: sn.db}\ntemplates:\n  a: {template: \"A@<seq>\"}\nserve: {tls_key: key.pem}\n")
	for _, tc := range []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"serve", "--config", mem}, nil, "forgets them when sn serve stops"},
		{[]string{"serve", "--config", bolt, "--listen", "0.0.0.0:0"}, nil, "without tokens"},
		{[]string{"serve", "--config", bolt, "--listen", "127.0.0.1:0"}, []string{"SN_TOKENS=short"}, "at least 16"},
		{[]string{"serve"}, nil, "--config FILE"},
		{[]string{"serve", "--config", bolt, "--tls-cert", "c.pem"}, nil, "--tls-key"},
		{[]string{"serve", "--config", noFile}, nil, "serve.tokens_file: open"},
		{[]string{"serve", "--config", badTLS}, nil, "line 4: serve.tls_key: tls_key without tls_cert"},
		{[]string{"serve", "--config", bolt, "--tls-cert", "missing.pem", "--tls-key", "missing.key"}, nil, "the TLS certificate and key: open missing.pem"},
	} {
		cmd := snCommand(t, tc.env, tc.args...)
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("sn %q: exit %d (%v), output:\n%s\nwant exit 2 and %q", tc.args, code, err, out, tc.want)
		}
	}
}

// Three sn serve processes share one Redis and one PostgreSQL ledger
// (the service on several machines). Under load from clients spread over
// them, one process is killed with SIGKILL and started again, Redis is
// killed and comes back empty, then is flushed: no number any client
// received repeats.
func TestServeMachines(t *testing.T) {
	for _, backend := range []string{"redis", "redis-strict"} {
		t.Run(backend, func(t *testing.T) {
			srv := redistest.Start(t) // no persistence: a restart is empty
			ledger := pgtest.Shared(t).NewDatabase(t)
			cfg := writeConfig(t, t.TempDir(), "sn.yaml", machineConfig(backend, srv.Addr(), ledger, ", step: 100"))
			m := startServers(t, [3]string{cfg, cfg, cfg})
			m.progress(3000)
			m.restart(0)
			m.progress(3000)
			srv.Kill(t)
			time.Sleep(300 * time.Millisecond) // requests fail while Redis is away
			srv.Restart(t)
			m.progress(3000)
			if err := srv.Client(t).FlushAll(t.Context()).Err(); err != nil {
				t.Fatal(err)
			}
			m.progress(3000)
			n, repeats := m.stop()
			if repeats != 0 {
				t.Fatalf("%d repeats in %d numbers", repeats, n)
			}
			t.Logf("%s: 3 sn serve processes, %d numbers in %d requests (%d failed) through a kill -9 and restart of one process, a kill -9 and empty restart of Redis and a FLUSHALL: 0 repeats", backend, n, m.answered.Load(), m.failed.Load())
		})
	}
}

// The control of TestServeMachines: the same load on three sn serve
// processes that each keep the counters in a bbolt file of their own, as
// three machines would with the embedded store. Their numbers repeat, and
// the count of repeats finds it.
func TestServeMachinesControl(t *testing.T) {
	var cfgs [3]string
	for i := range cfgs {
		cfgs[i] = writeConfig(t, t.TempDir(), "sn.yaml", "store: {backend: bolt, path: sn.db}\ntemplates:\n  orders: {template: \"SN-@<seq, width=10>\"}\n")
	}
	m := startServers(t, cfgs)
	m.progress(3000)
	n, repeats := m.stop()
	if repeats == 0 {
		t.Fatalf("no repeat in %d numbers from three stores that do not share their counters: the count cannot see repeats", n)
	}
	t.Logf("control: 3 sn serve processes on a bbolt file each: %d repeats in %d numbers", repeats, n)
}

// servers are three sn serve processes under load from six clients, each
// client spreading its requests over the three.
type servers struct {
	t                *testing.T
	cfgs             [3]string
	procs            [3]*serving
	urls             [3]atomic.Pointer[string]
	mu               sync.Mutex
	all              []string // every number a client received
	stopped          atomic.Bool
	answered, failed atomic.Int64
	wg               sync.WaitGroup
}

// startServers starts sn serve with each config, and the clients.
func startServers(t *testing.T, cfgs [3]string) *servers {
	m := &servers{t: t, cfgs: cfgs}
	for i := range m.procs {
		m.procs[i] = startServe(t, nil, "--config", cfgs[i])
		m.urls[i].Store(&m.procs[i].url)
	}
	for c := range 6 {
		rnd := rand.New(rand.NewPCG(uint64(c), 11))
		m.wg.Go(func() {
			client := &http.Client{Timeout: 10 * time.Second}
			for i := 0; i < 1_000_000 && !m.stopped.Load(); i++ {
				nums, err := issue(client, *m.urls[(c+i)%3].Load(), "orders", 1+rnd.IntN(20))
				if err != nil {
					m.failed.Add(1)
					time.Sleep(time.Millisecond)
					continue
				}
				m.answered.Add(1)
				m.mu.Lock()
				m.all = append(m.all, nums...)
				m.mu.Unlock()
			}
		})
	}
	t.Cleanup(func() {
		m.stopped.Store(true)
		m.wg.Wait()
	})
	return m
}

// progress waits until the clients have received n more numbers.
func (m *servers) progress(n int) {
	m.t.Helper()
	m.mu.Lock()
	start := len(m.all)
	m.mu.Unlock()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		m.mu.Lock()
		got := len(m.all) - start
		m.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("%d numbers in 60s, want %d (%d requests failed)", got, n, m.failed.Load())
		}
	}
}

// restart kills process i with SIGKILL and starts it again.
func (m *servers) restart(i int) {
	m.t.Helper()
	m.procs[i].cmd.Process.Kill()
	<-m.procs[i].done
	m.procs[i] = startServe(m.t, nil, "--config", m.cfgs[i])
	m.urls[i].Store(&m.procs[i].url)
}

// stop stops the clients, and returns how many numbers they received and
// how many of those repeat an earlier one.
func (m *servers) stop() (numbers, repeats int) {
	m.stopped.Store(true)
	m.wg.Wait()
	sorted := slices.Clone(m.all)
	slices.Sort(sorted)
	return len(sorted), len(sorted) - len(slices.Compact(sorted))
}

// The config's serve section gives the tokens (from a variable and a
// file it names) and the TLS certificate; sn serve then speaks only
// HTTPS, wants a token on /v1 and /metrics, and exports the metrics of
// its templates and stores.
func TestServeConfigSection(t *testing.T) {
	dir := t.TempDir()
	pool := selfSigned(t, dir)
	fileToken, envToken := "file-token-0123456789#abcdef", "env-token-0123456789abcdef"
	if err := os.WriteFile(filepath.Join(dir, "tokens.txt"), []byte("# the ledger team\n"+fileToken+"\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, "sn.yaml", `store: {backend: bolt, path: sn.db}
templates:
  a: {template: "A-@<seq, width=6>"}
serve:
  listen: 127.0.0.1:1   # the flag overrides it
  tokens_env: MY_TOKENS
  tokens_file: tokens.txt
  tls_cert: cert.pem
  tls_key: key.pem
  max_body: 512
`)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}
	s := startServeWith(t, client, []string{"MY_TOKENS=" + envToken}, "--config", cfg)
	if !strings.HasPrefix(s.url, "https://") {
		t.Fatalf("sn serve listens on %s, want https", s.url)
	}
	do := func(method, path, token, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if method == "POST" {
			req.Header.Set("Content-Type", "application/json")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, _ := do("POST", "/v1/templates/a/next", "", `{"n": 3}`); st != 401 {
		t.Errorf("without a token: %d", st)
	}
	for _, token := range []string{fileToken, envToken} {
		if st, body := do("POST", "/v1/templates/a/next", token, `{"n": 3}`); st != 200 {
			t.Errorf("with the token %s: %d %s", token, st, body)
		}
	}
	if st, _ := do("POST", "/v1/templates/a/next", envToken, `{"n": 3, "vars": {"pad": "`+strings.Repeat("x", 600)+`"}}`); st != 413 {
		t.Errorf("a body over max_body: %d, want 413", st)
	}
	if st, _ := do("GET", "/metrics", "", ""); st != 401 {
		t.Errorf("GET /metrics without a token: %d", st)
	}
	st, body := do("GET", "/metrics", fileToken, "")
	for _, want := range []string{`sn_numbers_issued_total{template="a"} 6`, `sn_keys{store="bolt `, "go_goroutines", "process_open_fds"} {
		if st != 200 || !strings.Contains(body, want) {
			t.Errorf("GET /metrics: %d, lacks %s", st, want)
		}
	}
	if st, body := do("GET", "/monitor", "", ""); st != 200 || !strings.Contains(body, "sn monitor") {
		t.Errorf("GET /monitor: %d", st)
	}
	if plain, err := http.Get(strings.Replace(s.url, "https", "http", 1) + "/healthz"); err == nil {
		plain.Body.Close()
		if plain.StatusCode == 200 {
			t.Error("sn serve with a certificate answers plain HTTP")
		}
	}
	if log := s.logged(); strings.Contains(log, fileToken) || strings.Contains(log, envToken) {
		t.Errorf("a token is in the log:\n%s", log)
	}
}

// selfSigned writes cert.pem and key.pem for 127.0.0.1 into dir and
// returns a pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sn test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(crand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{"cert.pem": {Type: "CERTIFICATE", Bytes: der}, "key.pem": {Type: "EC PRIVATE KEY", Bytes: kder}} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

// Sixteen clients on keep-alive connections (the Go client) issue numbers
// while sn serve gets SIGTERM. Every request is answered, or refused
// cleanly once the server has stopped listening (connection refused): none
// fails with a connection closed under it, since the server sends
// Connection: close from the signal on and the client sends again on a
// new connection what met a closing one. No number repeats.
func TestServeShutdownKeepAlive(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "sn.yaml", "store: {backend: bolt, path: sn.db}\ntemplates:\n  orders: {template: \"SN@<seq, width=10>\"}\n")
	for round := range 3 {
		s := startServe(t, nil, "--config", cfg)
		c, err := client.New(s.url, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		orders := c.Generator("orders")
		var mu sync.Mutex
		var all []string
		failures := map[string]int{}
		var answered atomic.Int64
		var stop atomic.Bool
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for i := 0; i < 200000 && !stop.Load(); i++ {
					nums, err := orders.Issue(context.Background(), client.Request{N: 5})
					var ce *client.Error
					mu.Lock()
					switch {
					case err == nil:
						all = append(all, nums...)
						answered.Add(1)
					case errors.Is(err, syscall.ECONNREFUSED):
						failures["refused"]++
					case errors.As(err, &ce) && ce.Code == wire.CodeClosed:
						failures["closed"]++
					default:
						failures[err.Error()]++
					}
					mu.Unlock()
				}
			})
		}
		time.Sleep(300 * time.Millisecond)
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(40 * time.Second):
			t.Fatalf("round %d: sn serve did not stop", round)
		}
		time.Sleep(100 * time.Millisecond)
		stop.Store(true)
		wg.Wait()
		sorted := slices.Clone(all)
		slices.Sort(sorted)
		repeats := len(sorted) - len(slices.Compact(sorted))
		t.Logf("round %d: %d requests answered, %d numbers, %d repeats, failures %v", round, answered.Load(), len(all), repeats, failures)
		for f, n := range failures {
			if f != "refused" && f != "closed" {
				t.Errorf("round %d: %d requests failed with %s", round, n, f)
			}
		}
		if repeats != 0 || answered.Load() == 0 {
			t.Errorf("round %d: %d repeats, %d answered", round, repeats, answered.Load())
		}
	}
}

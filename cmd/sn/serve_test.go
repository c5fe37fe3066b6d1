package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// serving is a running sn serve.
type serving struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{} // closed when the process has exited
	log  *bytes.Buffer
}

var listening = regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+)`)

// startServe starts sn serve on a free loopback port and waits until it
// is ready.
func startServe(t *testing.T, env []string, args ...string) *serving {
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
	var mu sync.Mutex
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			s.log.WriteString(sc.Text() + "\n")
			mu.Unlock()
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
		t.Fatalf("sn serve exited: %s", s.log)
	case <-time.After(20 * time.Second):
		t.Fatalf("sn serve did not listen within 20s: %s", s.log)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(s.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("sn serve not ready within 10s: %v", err)
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
				t.Errorf("round %d: exit %d after SIGTERM; log:\n%s", round, code, s.log)
			}
		}
		if answered.Load() == 0 {
			t.Fatalf("round %d: no request answered; log:\n%s", round, s.log)
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
	} {
		cmd := snCommand(t, tc.env, tc.args...)
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("sn %q: exit %d (%v), output:\n%s\nwant exit 2 and %q", tc.args, code, err, out, tc.want)
		}
	}
}

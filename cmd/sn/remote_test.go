package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/client"
	"github.com/sngen/sn/remote"
	"github.com/sngen/sn/sequence"
)

// remoteClientEnv makes the test binary a client process of the remote
// block tests (see TestMain): it prints, one per line, the numbers it
// issues from template SN_RC_TEMPLATE of the sn serve at SN_RC_URL, until
// SIGTERM or stdin closes. With SN_RC_BROKEN set it is the control: it
// counts from a store of its own, as a client that did not take blocks
// from the service would.
const remoteClientEnv = "SN_RC_URL"

// remoteClient is the client process's main.
func remoteClient() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if os.Getenv("SN_RC_COUNT") == "" {
		go func() { io.Copy(io.Discard, os.Stdin); stop() }()
	}
	out := os.Stdout // unbuffered: each number is written as it is issued, in one write
	var g interface {
		Issue(context.Context, sn.Request) ([]string, error)
	}
	if os.Getenv("SN_RC_BROKEN") != "" {
		seg, err := sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{Step: 10})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		gen, err := sn.New(os.Getenv("SN_RC_TEXT"), sn.WithSequence("seq", seg))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		g = gen
	} else if os.Getenv("SN_RC_REQUEST") != "" {
		c, err := client.New(os.Getenv(remoteClientEnv), client.Options{Token: os.Getenv("SN_RC_TOKEN")})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		g = requests{c.Generator(os.Getenv("SN_RC_TEMPLATE"))}
	} else {
		c, err := client.New(os.Getenv(remoteClientEnv), client.Options{Token: os.Getenv("SN_RC_TOKEN")})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		var rg *remote.Generator
		for try := 0; ; try++ { // sn serve may be restarting
			opts := remote.Options{Segment: sequence.SegmentOptions{Step: 10, MaxStep: 200}} // small blocks: many of them in a fault test
			if os.Getenv("SN_RC_COUNT") != "" {
				opts = remote.Options{} // the defaults, for a benchmark
			}
			rg, err = remote.New(ctx, c, os.Getenv("SN_RC_TEMPLATE"), opts)
			if err == nil || try == 50 || ctx.Err() != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer rg.Close()
		g = rg
	}
	if n, err := strconv.Atoi(os.Getenv("SN_RC_COUNT")); err == nil {
		// A benchmark's client: n numbers, one per call, counted.
		for range n {
			if _, err := g.Issue(ctx, sn.Request{}); err != nil {
				fmt.Fprintln(os.Stderr, "issue:", err)
				return 1
			}
		}
		if rg, ok := g.(*remote.Generator); ok && os.Getenv("SN_RC_STATS") != "" {
			fmt.Fprintf(os.Stderr, "%+v\n", rg.Stats())
		}
		return 0
	}
	for ctx.Err() == nil {
		nums, err := g.Issue(ctx, sn.Request{N: 1 + rand.IntN(5)})
		for _, n := range nums {
			fmt.Fprintln(out, n)
		}
		if err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "issue:", err)
			time.Sleep(50 * time.Millisecond)
		}
	}
	return 0
}

// requests issues through the client, a request per call.
type requests struct{ g *client.Generator }

func (r requests) Issue(ctx context.Context, req sn.Request) ([]string, error) {
	return r.g.Issue(ctx, client.Request{N: req.N, At: req.At, Vars: req.Vars})
}

// BenchmarkRemoteProcesses runs 8 client processes on one sn serve, each
// issuing b.N/8 numbers one per call, from remote blocks and, for
// comparison, a request per number, and reports numbers per second:
//
//	go test -run '^$' -bench RemoteProcesses -benchtime 400000x -count 3 ./cmd/sn
//
// (the request contender runs b.N/100 numbers: it is that much slower).
func BenchmarkRemoteProcesses(b *testing.B) {
	dir := b.TempDir()
	cfg := filepath.Join(dir, "sn.yaml")
	os.WriteFile(filepath.Join(dir, "tokens"), []byte("app=remote-app-0123456789abcdef\n"), 0o600)
	os.WriteFile(cfg, []byte(`
store: {backend: bolt, path: sn.db}
templates:
  orders: {template: "SN-@<seq, width=10>-@<checksum, algo=luhn>"}
serve:
  tokens_file: tokens
  tokens: [{id: app, actions: [issue, read]}]
`), 0o600)
	s := startServeB(b, cfg)
	exe, _ := os.Executable()
	for _, mode := range []struct {
		name string
		env  string
		div  int
	}{{"remote", "", 1}, {"request", "SN_RC_REQUEST=1", 100}} {
		b.Run(mode.name, func(b *testing.B) {
			per := max(1, b.N/8/mode.div)
			var cmds []*exec.Cmd
			for range 8 {
				cmd := exec.Command(exe)
				cmd.Env = append(os.Environ(), remoteClientEnv+"="+s, "SN_RC_TOKEN=remote-app-0123456789abcdef", "SN_RC_TEMPLATE=orders", "SN_RC_COUNT="+strconv.Itoa(per), mode.env)
				cmd.Stderr = os.Stderr
				cmds = append(cmds, cmd)
			}
			b.ResetTimer()
			start := time.Now()
			for _, cmd := range cmds {
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
			}
			for _, cmd := range cmds {
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(8*per)/time.Since(start).Seconds(), "numbers/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// startServeB starts sn serve for a benchmark and returns its URL.
func startServeB(b *testing.B, cfg string) string {
	cmd := exec.Command(snBin, "serve", "--config", cfg, "--listen", "127.0.0.1:0")
	cmd.Env = []string{"HOME=" + b.TempDir(), "PATH=/usr/bin:/bin"}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, stderr)
			return m[1]
		}
	}
	b.Fatal("sn serve did not start")
	return ""
}

// clientProc is a running client process and what it printed.
type clientProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}
	nums  []string // under the run's lock
	errs  strings.Builder
}

// clients runs client processes and gathers their numbers.
type clients struct {
	t   *testing.T
	env []string
	mu  sync.Mutex
	all []*clientProc
}

func (cs *clients) start() *clientProc {
	cs.t.Helper()
	exe, err := os.Executable()
	if err != nil {
		cs.t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), cs.env...)
	p := &clientProc{cmd: cmd, done: make(chan struct{})}
	stdout, _ := cmd.StdoutPipe()
	p.stdin, _ = cmd.StdinPipe()
	cmd.Stderr = &lockedWriter{mu: &cs.mu, w: &p.errs}
	if err := cmd.Start(); err != nil {
		cs.t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			cs.mu.Lock()
			p.nums = append(p.nums, sc.Text())
			cs.mu.Unlock()
		}
		cmd.Wait()
		close(p.done)
	}()
	cs.mu.Lock()
	cs.all = append(cs.all, p)
	cs.mu.Unlock()
	cs.t.Cleanup(func() { cmd.Process.Kill(); <-p.done })
	return p
}

// count returns how many numbers the clients printed, and how many of
// them were printed more than once.
func (cs *clients) count() (total, repeats int, first string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	seen := map[string]bool{}
	for _, p := range cs.all {
		for _, n := range p.nums {
			total++
			if seen[n] {
				repeats++
				if first == "" {
					first = n
				}
			}
			seen[n] = true
		}
	}
	return total, repeats, first
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// freePort returns a loopback address no one listens on.
func freePort(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Client processes print numbers from remote blocks while some are
// killed with SIGKILL and sn serve is killed and restarted under their
// load: no number is printed twice, and every block is in the journal,
// with the token and the process that took it. The control, client
// processes that count from stores of their own, prints repeats, so the
// count can see one.
func TestRemoteBlocksFaults(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "sn.yaml")
	os.WriteFile(filepath.Join(dir, "tokens"), []byte("app=remote-app-0123456789abcdef\n"), 0o600)
	os.WriteFile(cfg, []byte(`
store: {backend: bolt, path: sn.db, step: 20}
templates:
  orders: {template: "SN-@<seq, width=8>-@<checksum, algo=luhn>"}
serve:
  tokens_file: tokens
  tokens: [{id: app, actions: [issue, read]}]
`), 0o600)
	addr := freePort(t)
	serve := func() *serving { return startServe(t, nil, "--config", cfg, "--listen", addr) }
	s := serve()
	cs := &clients{t: t, env: []string{remoteClientEnv + "=" + s.url, "SN_RC_TOKEN=remote-app-0123456789abcdef", "SN_RC_TEMPLATE=orders"}}
	for range 8 {
		cs.start()
	}
	// waitFor waits until every client still running has printed more
	// numbers than blocks of MaxStep hold: each has taken blocks since.
	waitFor := func(more int) {
		t.Helper()
		cs.mu.Lock()
		base := map[*clientProc]int{}
		for _, p := range cs.all {
			base[p] = len(p.nums)
		}
		cs.mu.Unlock()
		ok := within(60*time.Second, func() bool {
			cs.mu.Lock()
			defer cs.mu.Unlock()
			for _, p := range cs.all {
				select {
				case <-p.done:
					continue
				default:
				}
				if len(p.nums) < base[p]+more {
					return false
				}
			}
			return true
		})
		if !ok {
			cs.mu.Lock()
			defer cs.mu.Unlock()
			t.Fatalf("the clients did not print %d numbers more each: %s", more, cs.all[len(cs.all)-1].errs.String())
		}
	}
	waitFor(500)
	// Three clients killed mid-block, and replaced.
	killed := 0
	for i := range 3 {
		cs.all[i].cmd.Process.Signal(syscall.SIGKILL)
		<-cs.all[i].done
		killed++
		cs.start()
	}
	waitFor(500)
	// sn serve killed under load, and started again: the clients issue
	// from their blocks meanwhile, and retry for new ones.
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
	time.Sleep(300 * time.Millisecond)
	s = serve()
	waitFor(1000)
	// Then stopped gently, under load.
	s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.done
	s = serve()
	waitFor(1000)
	for _, p := range cs.all {
		p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range cs.all {
		<-p.done
	}
	total, repeats, first := cs.count()
	t.Logf("%d client processes (%d killed), sn serve killed once and stopped once: %d numbers, repeats: %d", len(cs.all), killed, total, repeats)
	if repeats != 0 {
		t.Errorf("%d numbers printed twice, such as %s", repeats, first)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.done

	// The journal holds every block, each with the token and the client
	// process that took it.
	r := runSN(t, "", nil, "gaps", "--config", cfg, "orders", "--all")
	if !strings.Contains(r.stdout, "token app, for ") || !strings.Contains(r.stdout, ".test[") {
		t.Errorf("sn gaps: the blocks should name the token and the client process:\n%s%s", r.stdout, r.stderr)
	}
	t.Logf("sn gaps (exit %d), its first lines:\n%s", r.code, strings.Join(strings.SplitN(r.stdout, "\n", 12)[:min(11, strings.Count(r.stdout, "\n"))], "\n"))
	v := runSN(t, "", nil, "verify", "--config", cfg, "orders")
	if v.code != 0 {
		t.Errorf("sn verify: exit %d: %s%s", v.code, v.stdout, v.stderr)
	}

	// The control.
	ctl := &clients{t: t, env: []string{remoteClientEnv + "=unused", "SN_RC_BROKEN=1", "SN_RC_TEXT=SN-@<seq, width=8>-@<checksum, algo=luhn>"}}
	for range 2 {
		ctl.start()
	}
	if !within(30*time.Second, func() bool { _, rep, _ := ctl.count(); return rep > 0 }) {
		t.Error("the control printed no repeats: the count cannot see one")
	}
	for _, p := range ctl.all {
		p.cmd.Process.Signal(syscall.SIGTERM)
		<-p.done
	}
	_, rep, _ := ctl.count()
	t.Logf("the control: repeats: %d", rep)
}

// Package etcdtest starts real etcd clusters for tests: three members on
// 127.0.0.1, each an etcd process with its own ports and data directory,
// on the pattern of every harness in internal/ (see internal/testserver).
// Nothing is mocked.
//
//	func TestMain(m *testing.M) { etcdtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		c := etcdtest.Shared(t)
//		cli := c.Client(t)
//		...
//	}
//
// A test that kills, pauses or restarts members starts a cluster of its
// own with [Start]. The members fsync their writes as etcd always does, so
// a member killed with SIGKILL loses nothing it acknowledged.
//
// When etcd is not installed the tests fail (they never skip) with a
// message that says to run `make test`, which installs Debian's
// etcd-server.
package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/sngen/sn/internal/testserver"
)

// Size is the number of members of a cluster.
const Size = 3

// Timing of the members' Raft: an election 500ms after the leader is last
// heard from, so that fault tests see a new leader within a second.
const (
	heartbeat       = 50 * time.Millisecond
	electionTimeout = 500 * time.Millisecond
)

// env is what the clusters of one test binary share.
type env struct {
	bin  string // etcd
	root string // the directory of every cluster
}

var harness = &testserver.Harness[*env, *Cluster]{
	Pkg:        "etcdtest",
	NewEnv:     newEnv,
	RemoveEnv:  func(e *env) { os.RemoveAll(e.root) },
	NewServer:  (*env).startCluster,
	StopServer: (*Cluster).stop,
}

func newEnv() (*env, error) {
	bin, err := exec.LookPath("etcd")
	if err != nil {
		return nil, fmt.Errorf("etcdtest: etcd not found (%v).\n"+
			"!!! The tests need a real etcd on this machine. Run `make test` at the repository root:\n"+
			"!!! it installs etcd-server (apt-get install etcd-server) and then runs go test -race ./...", err)
	}
	root, err := testserver.Owner{}.NewRoot("etcdtest", nil)
	if err != nil {
		return nil, err
	}
	return &env{bin: bin, root: root}, nil
}

// Main runs the tests of a package, then stops every cluster still running,
// removes their directories, and exits with the tests' status. [Shared] and
// [Start] need it; call it from TestMain.
func Main(m *testing.M) { os.Exit(Run(m.Run)) }

// Run runs tests (m.Run, or another harness's Run around it; see
// testserver.Chain) and then stops the shared cluster and removes every
// directory, as [Main] does, and returns the tests' code.
func Run(tests func() int) int { return harness.Run(tests) }

// Shared returns a cluster started on first use and shared by all the
// tests of the package; [Main] stops it after the last test. Tests sharing
// it must use keys of their own, and cannot kill, pause or restart its
// members.
func Shared(tb testing.TB) *Cluster {
	tb.Helper()
	return harness.Shared(tb)
}

// Start starts a cluster of the test's own and stops it, removing its
// data, when the test ends. Use it to kill, pause or restart members.
func Start(tb testing.TB) *Cluster {
	tb.Helper()
	return harness.Start(tb)
}

// Cluster is a three-member etcd cluster on 127.0.0.1. Its methods are safe
// for concurrent use.
type Cluster struct {
	Members []*Member
	dir     string
	token   string    // the cluster's initial-cluster-token
	tls     *TLSFiles // clients over TLS, when not nil (StartTLS)
}

// Member is one etcd process of a [Cluster]. Its Process gives Kill,
// Stop, Pause, Resume and Restart; Restart starts it again with the data it
// had, as a member that rebooted.
type Member struct {
	*testserver.Process
	Name     string
	PeerPort int
	secure   bool // clients over TLS
}

// ClientURL returns the member's client URL, http://127.0.0.1:port, or
// https:// in a cluster started by StartTLS.
func (m *Member) ClientURL() string {
	if m.secure {
		return "https://" + m.Addr()
	}
	return "http://" + m.Addr()
}

func (m *Member) peerURL() string {
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(m.PeerPort))
}

// startCluster starts three members in a directory of the cluster's own and
// waits until the cluster has a leader and every member is healthy.
func (e *env) startCluster(shared bool) (*Cluster, error) { return e.newCluster(shared, nil) }

// newCluster starts a cluster, serving clients over TLS with files when
// not nil.
func (e *env) newCluster(shared bool, files *TLSFiles) (*Cluster, error) {
	dir, err := os.MkdirTemp(e.root, "cluster-")
	if err != nil {
		return nil, fmt.Errorf("etcdtest: %w", err)
	}
	c := &Cluster{dir: dir, token: filepath.Base(dir), tls: files}
	for attempt := range testserver.BindAttempts {
		if err = c.start(e.bin, shared); err == nil || !errors.Is(err, testserver.ErrPortTaken) {
			break
		}
		c.stop()
		c = &Cluster{dir: dir, token: fmt.Sprintf("%s-%d", filepath.Base(dir), attempt+1), tls: files}
		os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// start makes the members on free ports and starts them.
func (c *Cluster) start(bin string, shared bool) error {
	ports := make([]int, 2*Size)
	seen := map[int]bool{}
	for i := range ports {
		for {
			p, err := testserver.FreePort()
			if err != nil {
				return fmt.Errorf("etcdtest: no free port on 127.0.0.1: %w", err)
			}
			if !seen[p] {
				seen[p], ports[i] = true, p
				break
			}
		}
	}
	var initial []string
	for i := range Size {
		m := &Member{Name: "m" + strconv.Itoa(i), PeerPort: ports[2*i+1], secure: c.tls != nil}
		m.Process = &testserver.Process{
			Pkg: "etcdtest", Name: "etcd " + m.Name, Install: "etcd-server",
			Bin: bin, WorkDir: filepath.Join(c.dir, m.Name), Port: ports[2*i],
			Log:          "etcd.log",
			StartTimeout: 30 * time.Second,
			StopSignal:   syscall.SIGTERM, StopTimeout: 10 * time.Second,
			Shared: shared,
		}
		if err := os.MkdirAll(m.WorkDir, 0o755); err != nil {
			return fmt.Errorf("etcdtest: %w", err)
		}
		// A member listens on its peer port before it has a quorum; the
		// cluster is ready when every member is healthy (waitHealthy).
		peer := net.JoinHostPort("127.0.0.1", strconv.Itoa(m.PeerPort))
		m.Ready = func() error {
			conn, err := net.DialTimeout("tcp", peer, time.Second)
			if err == nil {
				conn.Close()
			}
			return err
		}
		c.Members = append(c.Members, m)
		initial = append(initial, m.Name+"="+m.peerURL())
	}
	for _, m := range c.Members {
		m.Args = c.args(m, strings.Join(initial, ","), "new")
	}
	var wg sync.WaitGroup
	errs := make([]error, Size)
	for i, m := range c.Members {
		wg.Go(func() { errs[i] = m.Start() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.waitHealthy(ctx, c.Members)
}

// args returns the command line of member m.
func (c *Cluster) args(m *Member, initialCluster, state string) []string {
	var secure []string
	if c.tls != nil {
		dir := filepath.Dir(c.tls.CA)
		secure = []string{
			"--cert-file", filepath.Join(dir, "server.pem"),
			"--key-file", filepath.Join(dir, "server-key.pem"),
			"--trusted-ca-file", c.tls.CA,
			"--client-cert-auth",
		}
	}
	return append(secure, []string{
		"--name", m.Name,
		"--data-dir", filepath.Join(m.WorkDir, "data"),
		"--listen-client-urls", m.ClientURL(),
		"--advertise-client-urls", m.ClientURL(),
		"--listen-peer-urls", m.peerURL(),
		"--initial-advertise-peer-urls", m.peerURL(),
		"--initial-cluster", initialCluster,
		"--initial-cluster-state", state,
		"--initial-cluster-token", c.token,
		"--heartbeat-interval", strconv.Itoa(int(heartbeat / time.Millisecond)),
		"--election-timeout", strconv.Itoa(int(electionTimeout / time.Millisecond)),
		"--logger", "zap",
		"--log-outputs", "stderr",
	}...)
}

// waitHealthy waits until every member of ms answers /health with true:
// it is in a cluster with a leader and can serve.
func (c *Cluster) waitHealthy(ctx context.Context, ms []*Member) error {
	hc := &http.Client{Timeout: time.Second}
	if c.tls != nil {
		cfg, err := c.tls.clientTLS()
		if err != nil {
			return fmt.Errorf("etcdtest: %w", err)
		}
		hc.Transport = &http.Transport{TLSClientConfig: cfg}
	}
	for _, m := range ms {
		for {
			err := health(ctx, hc, m)
			if err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("etcdtest: %s is not healthy: %v\nlog tail:\n%s", m, err, m.LogTail())
			case <-time.After(20 * time.Millisecond): // polling another process: no event to wait on
			}
		}
	}
	return nil
}

func health(ctx context.Context, hc *http.Client, m *Member) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.ClientURL()+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var b [256]byte
	n, _ := resp.Body.Read(b[:])
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b[:n]), `"health":"true"`) {
		return fmt.Errorf("GET /health: %s %s", resp.Status, b[:n])
	}
	return nil
}

// WaitHealthy waits, for a minute at most, until every running member is
// healthy: after a restart, a resume or an election.
func (c *Cluster) WaitHealthy(tb testing.TB) {
	tb.Helper()
	var running []*Member
	for _, m := range c.Members {
		if m.Running() {
			running = append(running, m)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.waitHealthy(ctx, running); err != nil {
		tb.Fatalf("%v", err)
	}
}

// Endpoints returns the client URLs of the members.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.Members {
		eps = append(eps, m.ClientURL())
	}
	return eps
}

// Client returns a client of the whole cluster, closed when the test ends.
func (c *Cluster) Client(tb testing.TB) *clientv3.Client {
	tb.Helper()
	cfg := clientv3.Config{
		Endpoints:   c.Endpoints(),
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	}
	if c.tls != nil {
		var err error
		if cfg.TLS, err = c.tls.clientTLS(); err != nil {
			tb.Fatalf("etcdtest: %v", err)
		}
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		tb.Fatalf("etcdtest: client of %v: %v", c.Endpoints(), err)
	}
	tb.Cleanup(func() { cli.Close() })
	return cli
}

// Leader returns the member that is the leader now, asking each running
// member's status; it calls tb.Fatalf when none says it leads.
func (c *Cluster) Leader(tb testing.TB) *Member {
	tb.Helper()
	cli := c.Client(tb)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, m := range c.Members {
			if !m.Running() {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			st, err := cli.Status(ctx, m.ClientURL())
			cancel()
			if err == nil && st.Leader == st.Header.MemberId {
				return m
			}
		}
	}
	tb.Fatalf("etcdtest: no member of %v leads", c.Endpoints())
	return nil
}

// Replace replaces member m by an empty one, as an operator replaces a
// member whose disk was lost: m is removed from the cluster, killed, its
// data directory deleted, then added back as a new member (a new ID) and
// started with --initial-cluster-state existing, and Replace waits until it
// is healthy, having caught up from the leader. It calls tb.Fatalf when a
// step fails or the cluster is shared.
func (c *Cluster) Replace(tb testing.TB, m *Member) {
	tb.Helper()
	cli := c.Client(tb)
	var id uint64
	c.do(tb, "finding "+m.Name, func(ctx context.Context) (err error) {
		id, err = c.memberID(ctx, cli, m.Name)
		return err
	})
	c.do(tb, "removing "+m.Name, func(ctx context.Context) error {
		_, err := cli.MemberRemove(ctx, id)
		if err != nil && strings.Contains(err.Error(), "member not found") {
			return nil // an earlier attempt removed it
		}
		return err
	})
	m.Kill(tb)
	if err := os.RemoveAll(filepath.Join(m.WorkDir, "data")); err != nil {
		tb.Fatalf("etcdtest: %v", err)
	}
	c.do(tb, "adding "+m.Name+" back", func(ctx context.Context) error {
		_, err := cli.MemberAdd(ctx, []string{m.peerURL()})
		if err != nil && strings.Contains(err.Error(), "Peer URLs already exists") {
			return nil // an earlier attempt added it
		}
		return err
	})
	var initial []string
	for _, o := range c.Members {
		initial = append(initial, o.Name+"="+o.peerURL())
	}
	m.Args = c.args(m, strings.Join(initial, ","), "existing") // m is stopped
	m.Restart(tb)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.waitHealthy(ctx, []*Member{m}); err != nil {
		tb.Fatalf("%v", err)
	}
}

// do calls f with a context of 2 seconds until it succeeds, for 30
// seconds at most: the client's first request after a member died may
// wait on it until its deadline, and etcd refuses to remove a member until
// the others have been up for 5 seconds ("unhealthy cluster").
func (c *Cluster) do(tb testing.TB, what string, f func(ctx context.Context) error) {
	tb.Helper()
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = f(ctx)
		cancel()
		if err == nil {
			return
		}
	}
	tb.Fatalf("etcdtest: %s: %v", what, err)
}

// memberID returns the ID of the member called name.
func (c *Cluster) memberID(ctx context.Context, cli *clientv3.Client, name string) (uint64, error) {
	r, err := cli.MemberList(ctx)
	if err != nil {
		return 0, err
	}
	for _, mm := range r.Members {
		if mm.Name == name {
			return mm.ID, nil
		}
	}
	return 0, fmt.Errorf("no member %s in %v", name, r.Members)
}

// stop stops every member and removes the cluster's directory.
func (c *Cluster) stop() {
	testserver.HaltAll(c.Members)
	os.RemoveAll(c.dir)
}

// Package redistest starts real redis-server processes for tests.
//
// Every test in this module that needs Redis talks to a real server on
// 127.0.0.1, started by this package on a free port with its own data
// directory, and stopped when the test ends. Nothing is mocked. It follows
// the pattern of every harness in internal/ (see internal/testserver): the
// package's TestMain calls [Main] or [Run], which remove every server and
// directory when the tests end, and each test starts servers of its own:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		srv := redistest.Start(t)
//		rdb := srv.Client(t)
//		...
//	}
//
// A Redis Cluster takes a few seconds to form, so a package usually starts
// one for all its tests with [SharedCluster].
//
// When redis-server is not installed the tests fail (they never skip) with a
// message that says to run `make test`, which installs it.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/testserver"
)

// startTimeout bounds how long a redis-server may take to answer PING.
const startTimeout = 15 * time.Second

// Option configures a [Server] started by [Start].
type Option func(*config)

type config struct {
	bin        string
	persistent bool
	cluster    bool // cluster-enabled, with a cluster bus port of its own
	args       []string
}

// Persistent makes the server keep its data across [Server.Kill] and
// [Server.Restart]: the append-only file is on and fsynced after every
// write, so even kill -9 loses nothing. Without it (the default) the server
// runs with `--save "" --appendonly no` and a restart starts empty.
func Persistent() Option {
	return func(c *config) { c.persistent = true }
}

// Args appends raw redis-server command-line arguments, such as
// "--maxmemory", "1mb". They come after the defaults and so override them.
func Args(args ...string) Option {
	return func(c *config) { c.args = append(c.args, args...) }
}

// Binary runs the redis-server executable at path instead of the one found
// in $PATH. It exists to test failure reporting.
func Binary(path string) Option {
	return func(c *config) { c.bin = path }
}

// Server is a redis-server process listening on 127.0.0.1, with its data
// and its log (redis.log) in [Server.Dir]. [Server.Kill] kills it with
// SIGKILL, as a crash would: data not persisted is lost. [Server.Stop] shuts
// it down with SIGTERM. Its methods are safe for concurrent use.
type Server struct {
	*testserver.Process
}

// env is what the servers of one test binary share.
type env struct {
	bin  string // redis-server
	root string // the directory of every server
}

// harness keeps the test binary's directory and its shared cluster.
var harness = &testserver.Harness[*env, *Cluster]{
	Pkg:        "redistest",
	NewEnv:     newEnv,
	RemoveEnv:  func(e *env) { os.RemoveAll(e.root) },
	NewServer:  (*env).startCluster,
	StopServer: (*Cluster).stop,
}

func newEnv() (*env, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, notInstalled("redis-server", err)
	}
	root, err := testserver.Owner{}.NewRoot("redistest", nil)
	if err != nil {
		return nil, err
	}
	return &env{bin: bin, root: root}, nil
}

// Main runs the tests of a package, then stops every server and cluster
// still running, removes their directories, and exits with the tests'
// status. [Start], [StartCluster] and [SharedCluster] need it; call it from
// TestMain:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
func Main(m *testing.M) { os.Exit(Run(m.Run)) }

// Run runs tests (m.Run, or another harness's Run around it; see
// [testserver.Chain]) and then stops the shared cluster and removes every
// directory, as [Main] does, and returns the tests' code.
func Run(tests func() int) int { return harness.Run(tests) }

// Start starts a redis-server on a free 127.0.0.1 port with its own
// directory, waits until it answers PING, and stops it when the test ends,
// removing its directory. It calls tb.Fatalf when the server cannot be
// started, for example when redis-server is not installed, or the
// package's TestMain does not call [Main]; it never skips.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	e := harness.Env(tb)
	cfg := config{bin: e.bin}
	for _, o := range opts {
		o(&cfg)
	}
	dir, err := os.MkdirTemp(e.root, "server-")
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	s, err := startServer(cfg, dir)
	if err != nil {
		os.RemoveAll(dir)
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(func() { s.remove() })
	return s
}

// remove stops the server and removes its directory.
func (s *Server) remove() {
	s.Halt(false)
	os.RemoveAll(s.WorkDir)
}

// startServer starts a server in dir on a free port, retrying with another
// port when the chosen one was taken in the meantime.
func startServer(cfg config, dir string) (*Server, error) {
	var s *Server
	err := testserver.OnFreePort("redistest", func(port int) (err error) {
		busPort := 0
		if cfg.cluster {
			// The bus port defaults to port+10000, which may be taken or
			// above 65535.
			if busPort, err = testserver.FreePort(); err != nil {
				return fmt.Errorf("redistest: no free port on 127.0.0.1: %w", err)
			}
		}
		s = &Server{Process: &testserver.Process{
			Pkg: "redistest", Name: "Redis", Install: "redis-server",
			Bin: cfg.bin, Args: argv(cfg, dir, port, busPort), WorkDir: dir, Port: port,
			Log:          "redis.log",
			StartTimeout: startTimeout,
			StopSignal:   syscall.SIGTERM, StopTimeout: 10 * time.Second,
		}}
		addr := s.Addr()
		s.Ready = func() error { return ping(addr) }
		return s.Start()
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func notInstalled(name string, err error) error {
	return fmt.Errorf("redistest: %s not found (%v).\n"+
		"!!! The tests need a real Redis 7 server on this machine. Run `make test` at the repository root:\n"+
		"!!! it installs redis-server (apt-get install redis-server) and then runs go test -race ./...", name, err)
}

// StartReplica starts a server like [Start] that replicates master
// (--replicaof), and waits until its link to the master is up and the
// initial sync is done. Promote it with REPLICAOF NO ONE.
func StartReplica(tb testing.TB, master *Server, opts ...Option) *Server {
	tb.Helper()
	// The master waits 5s by default for more replicas before a diskless
	// full sync.
	m := redis.NewClient(&redis.Options{Addr: master.Addr()})
	err := m.ConfigSet(context.Background(), "repl-diskless-sync-delay", "0").Err()
	m.Close()
	if err != nil {
		tb.Fatalf("redistest: CONFIG SET on master %s: %v", master.Addr(), err)
	}
	opts = append(opts, Args("--replicaof", "127.0.0.1", strconv.Itoa(master.Port)))
	s := Start(tb, opts...)
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer rdb.Close()
	deadline := time.Now().Add(startTimeout)
	for {
		info, err := rdb.Info(context.Background(), "replication").Result()
		if err == nil && strings.Contains(info, "master_link_status:up") && strings.Contains(info, "master_sync_in_progress:0") {
			return s
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: replica %s of %s did not sync within %v: %v\n%s\nlog tail:\n%s", s.Addr(), master.Addr(), startTimeout, err, info, s.LogTail())
		}
		time.Sleep(10 * time.Millisecond) // polling another process: no event to wait on
	}
}

// Detach breaks the link of replica, a server started by [StartReplica],
// to master at a moment when ready holds on its data: like a replica whose
// link broke, it keeps what it had received and nothing after, and serves
// as a master from then on (REPLICAOF NO ONE). Until ready holds, it
// follows master again, waits for the sync and detaches again, at most 200
// times; then Detach calls Fatalf.
func Detach(tb testing.TB, replica, master *Server, ready func(context.Context, *redis.Client) bool) {
	tb.Helper()
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: replica.Addr()})
	defer rdb.Close()
	// Whether ready holds is chance (a range used up the moment the link
	// broke). After a try that missed, the replica stays attached a while:
	// writers that wait for a replica (WAIT) cannot move on while it is
	// detached, and the next try would find the same state.
	for try := range 200 {
		if err := rdb.SlaveOf(ctx, "127.0.0.1", strconv.Itoa(master.Port)).Err(); err != nil {
			tb.Fatalf("redistest: REPLICAOF on %s: %v", replica.Addr(), err)
		}
		for deadline := time.Now().Add(startTimeout); ; time.Sleep(10 * time.Millisecond) {
			info, err := rdb.Info(ctx, "replication").Result()
			if err == nil && strings.Contains(info, "master_link_status:up") && strings.Contains(info, "master_sync_in_progress:0") {
				break
			}
			if time.Now().After(deadline) {
				tb.Fatalf("redistest: replica %s of %s did not sync within %v: %v\n%s", replica.Addr(), master.Addr(), startTimeout, err, info)
			}
		}
		if try > 0 {
			time.Sleep(time.Duration(20+try%5*20) * time.Millisecond)
		}
		if err := rdb.SlaveOf(ctx, "NO", "ONE").Err(); err != nil {
			tb.Fatalf("redistest: REPLICAOF NO ONE on %s: %v", replica.Addr(), err)
		}
		if ready(ctx, rdb) {
			tb.Logf("redistest: replica %s detached after %d tries", replica.Addr(), try+1)
			return
		}
	}
	tb.Fatalf("redistest: replica %s never held the data wanted when detached", replica.Addr())
}

// Client returns a new client of the server, closed when the test ends.
func (s *Server) Client(tb testing.TB) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	tb.Cleanup(func() { c.Close() })
	return c
}

func argv(cfg config, dir string, port, busPort int) []string {
	a := []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--dir", dir,
		"--logfile", "", // standard output, into redis.log
		"--daemonize", "no",
		"--save", "",
		"--appendonly", "no",
	}
	if cfg.persistent {
		a = append(a, "--appendonly", "yes", "--appendfsync", "always")
	}
	if cfg.cluster {
		a = append(a,
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf",
			"--cluster-port", strconv.Itoa(busPort),
			"--cluster-node-timeout", "5000")
	}
	return append(a, cfg.args...)
}

// ping sends PING to addr over a plain connection, so that go-redis does
// not log every refused dial while the server is starting.
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 64)
	n, err := conn.Read(buf)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(string(buf[:n]), "+PONG") {
		return fmt.Errorf("PING answered %q", buf[:n])
	}
	return nil
}

// InfoField returns field of the INFO section of the server behind rdb,
// such as InfoField(t, rdb, "replication", "master_replid").
func InfoField(tb testing.TB, rdb redis.UniversalClient, section, field string) string {
	tb.Helper()
	info, err := rdb.Info(context.Background(), section).Result()
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	tb.Fatalf("INFO %s has no field %s", section, field)
	return ""
}

// AOF returns the path of the append-only file that takes the server's
// writes (Redis 7 keeps several under appendonlydir: the last incremental
// one), for tests that cut its tail as a crash before an fsync would.
func (s *Server) AOF(tb testing.TB) string {
	tb.Helper()
	files, _ := filepath.Glob(filepath.Join(s.WorkDir, "appendonlydir", "*.incr.aof"))
	if len(files) == 0 {
		tb.Fatalf("no append-only file in %s", s.WorkDir)
	}
	slices.Sort(files)
	return files[len(files)-1]
}

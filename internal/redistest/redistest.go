// Package redistest starts real redis-server processes for tests.
//
// Every test in this module that needs Redis talks to a real server on
// 127.0.0.1, started by this package on a free port with its own data
// directory, and stopped when the test ends. Nothing is mocked.
//
//	func TestSomething(t *testing.T) {
//		srv := redistest.StartServer(t)
//		rdb := srv.Client(t)
//		...
//	}
//
// A Redis Cluster takes a few seconds to form, so a package usually starts
// one for all its tests with [SharedCluster] and stops it from TestMain with
// [Main]:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
//
// When redis-server is not installed the tests fail (they never skip) with a
// message that says to run `make test`, which installs it.
package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/dbtest"
)

// startTimeout bounds how long a redis-server may take to answer PING.
const startTimeout = 15 * time.Second

// Option configures a [Server] started by [StartServer].
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

// Server is a redis-server process listening on 127.0.0.1. Its methods are
// safe for concurrent use.
type Server struct {
	tb      testing.TB // nil for servers shared by a package
	cfg     config
	dir     string
	port    int
	busPort int // cluster bus port, if cfg.cluster

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
}

// StartServer starts a redis-server on a free 127.0.0.1 port with its own
// directory under tb.TempDir, waits until it answers PING, and stops it when
// the test ends. It calls tb.Fatalf when the server cannot be started, for
// example when redis-server is not installed; it never skips.
func StartServer(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	s, err := startServer(cfg, tb.TempDir())
	if err != nil {
		tb.Fatalf("%v", err)
	}
	s.tb = tb
	tb.Cleanup(s.Stop)
	return s
}

// startServer starts a server in dir on a free port, retrying with another
// port when the chosen one was taken in the meantime.
func startServer(cfg config, dir string) (*Server, error) {
	if cfg.bin == "" {
		bin, err := exec.LookPath("redis-server")
		if err != nil {
			return nil, notInstalled("redis-server", err)
		}
		cfg.bin = bin
	}
	var s *Server
	err := dbtest.OnFreePort("redistest", func(port int) (err error) {
		s = &Server{cfg: cfg, dir: dir, port: port}
		if cfg.cluster {
			// The bus port defaults to port+10000, which may be taken or
			// above 65535.
			if s.busPort, err = dbtest.FreePort(); err != nil {
				return fmt.Errorf("redistest: no free port on 127.0.0.1: %w", err)
			}
		}
		return s.start()
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

// StartReplica starts a server like [StartServer] that replicates master
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
	opts = append(opts, Args("--replicaof", "127.0.0.1", strconv.Itoa(master.port)))
	s := StartServer(tb, opts...)
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer rdb.Close()
	deadline := time.Now().Add(startTimeout)
	for {
		info, err := rdb.Info(context.Background(), "replication").Result()
		if err == nil && strings.Contains(info, "master_link_status:up") && strings.Contains(info, "master_sync_in_progress:0") {
			return s
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: replica %s of %s did not sync within %v: %v\n%s\nlog tail:\n%s", s.Addr(), master.Addr(), startTimeout, err, info, s.logTail())
		}
		time.Sleep(10 * time.Millisecond) // polling another process: no event to wait on
	}
}

// Detach breaks the link of replica, a server started by [StartReplica],
// to master at a moment when ready holds on its data: like a replica whose
// link broke, it keeps what it had received and nothing after, and serves
// as a master from then on (REPLICAOF NO ONE). Until ready holds, it
// follows master again, waits for the sync and detaches again, at most 50
// times; then Detach calls Fatalf.
func Detach(tb testing.TB, replica, master *Server, ready func(context.Context, *redis.Client) bool) {
	tb.Helper()
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: replica.Addr()})
	defer rdb.Close()
	for range 50 {
		if err := rdb.SlaveOf(ctx, "127.0.0.1", strconv.Itoa(master.port)).Err(); err != nil {
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
		if err := rdb.SlaveOf(ctx, "NO", "ONE").Err(); err != nil {
			tb.Fatalf("redistest: REPLICAOF NO ONE on %s: %v", replica.Addr(), err)
		}
		if ready(ctx, rdb) {
			return
		}
	}
	tb.Fatalf("redistest: replica %s never held the data wanted when detached", replica.Addr())
}

// Addr returns the server's address, "127.0.0.1:port".
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Dir returns the server's working directory (its log is redis.log there).
func (s *Server) Dir() string { return s.dir }

// Client returns a new client of the server, closed when the test ends.
func (s *Server) Client(tb testing.TB) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	tb.Cleanup(func() { c.Close() })
	return c
}

func (s *Server) argv() []string {
	a := []string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--logfile", "redis.log",
		"--daemonize", "no",
		"--save", "",
		"--appendonly", "no",
	}
	if s.cfg.persistent {
		a = append(a, "--appendonly", "yes", "--appendfsync", "always")
	}
	if s.cfg.cluster {
		a = append(a,
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf",
			"--cluster-port", strconv.Itoa(s.busPort),
			"--cluster-node-timeout", "5000")
	}
	return append(a, s.cfg.args...)
}

// start launches the process and waits until it answers PING.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return fmt.Errorf("redistest: server %s is already running", s.Addr())
	}
	cmd := exec.Command(s.cfg.bin, s.argv()...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = sysProcAttr()
	var out strings.Builder
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return notInstalled(s.cfg.bin, err)
		}
		return fmt.Errorf("redistest: cannot start %s: %w. Run `make test`, which installs redis-server", s.cfg.bin, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	if err := waitPing(s.Addr(), exited); err != nil {
		cmd.Process.Kill()
		<-exited
		log := s.logTail()
		if strings.Contains(log, "Address already in use") || strings.Contains(out.String(), "Address already in use") {
			return fmt.Errorf("redistest: %s: %w", s.Addr(), dbtest.ErrPortTaken)
		}
		return fmt.Errorf("redistest: redis-server on %s did not start: %v\noutput: %s\nlog tail:\n%s\n"+
			"Run `make test`, which installs a working redis-server", s.Addr(), err, out.String(), log)
	}
	s.cmd, s.exited = cmd, exited
	return nil
}

// waitPing polls addr with PING until it answers or the process exits. It
// speaks RESP over a plain connection so that go-redis does not log every
// refused dial while the server is starting.
func waitPing(addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(startTimeout)
	for {
		err := ping(addr)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no PONG within %v: %w", startTimeout, err)
		}
		select {
		case <-exited:
			return errors.New("process exited")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

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

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// signal sends sig to the running process, if any, and waits for it to exit.
func (s *Server) signal(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(sig)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd, s.exited = nil, nil
}

// Kill stops the server with SIGKILL, as a crash would, and waits until the
// process has exited. Data not persisted is lost. Killing a stopped server
// does nothing.
func (s *Server) Kill() { s.signal(syscall.SIGKILL) }

// Stop shuts the server down with SIGTERM and waits until it has exited.
// Stopping a stopped server does nothing.
func (s *Server) Stop() { s.signal(syscall.SIGTERM) }

// Restart starts a stopped or killed server again on the same port and
// waits until it answers PING. Its data is empty unless the server is
// [Persistent]. Restart calls Fatalf on the test that started the server
// when the server is running or cannot be started, so call it from the test
// goroutine.
func (s *Server) Restart() {
	if err := dbtest.Rebind(s.start); err != nil {
		if s.tb == nil {
			panic(err)
		}
		s.tb.Helper()
		s.tb.Fatalf("%v", err)
	}
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
	files, _ := filepath.Glob(filepath.Join(s.dir, "appendonlydir", "*.incr.aof"))
	if len(files) == 0 {
		tb.Fatalf("no append-only file in %s", s.dir)
	}
	slices.Sort(files)
	return files[len(files)-1]
}

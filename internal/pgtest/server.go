package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"github.com/sngen/sn/internal/dbtest"
)

const (
	// startTimeout bounds how long a server may take to accept connections,
	// crash recovery included.
	startTimeout = 30 * time.Second
	// stopTimeout bounds a fast shutdown, after which the server is killed.
	stopTimeout = 10 * time.Second
)

// Server is a PostgreSQL server (a postmaster and its processes) listening
// on 127.0.0.1, with its Unix socket and data in a directory of its own. Its
// superuser can create and drop databases and roles. Its methods are safe
// for concurrent use.
type Server struct {
	env    *env
	dir    string // the server's directory: data/, the socket, postgres.log
	port   int
	shared bool // by the whole package: not to be killed or restarted

	mu     sync.Mutex
	cmd    *exec.Cmd     // the postmaster
	exited chan struct{} // closed when cmd has been waited for
}

// newServer copies the template into a directory of the new server's own
// and starts it on a free port.
func (e *env) newServer() (_ *Server, err error) {
	dir, err := e.owner.NewServerDir(e.root, e.template)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	var s *Server
	err = dbtest.OnFreePort("pgtest", func(port int) error {
		s = &Server{env: e, dir: dir, port: port}
		return s.start()
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Addr returns the server's address, "127.0.0.1:port".
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Dir returns the server's directory. Its log is postgres.log there and its
// data directory is data/.
func (s *Server) Dir() string { return s.dir }

func (s *Server) logPath() string { return filepath.Join(s.dir, "postgres.log") }

func (s *Server) argv() []string {
	return []string{
		"-D", filepath.Join(s.dir, "data"),
		"-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=" + s.dir,
		// Durability: COMMIT returns once the WAL is written and
		// flushed, so SIGKILL loses nothing committed. These are the
		// defaults, spelled out.
		"-c", "fsync=on",
		"-c", "synchronous_commit=on",
		"-c", "full_page_writes=on",
		"-c", "max_connections=200",
		"-c", "shared_buffers=32MB",
		// Dynamic shared memory in files under data/, not in /dev/shm,
		// so that it goes with the directory even after SIGKILL.
		"-c", "dynamic_shared_memory_type=mmap",
		// CREATE DATABASE logs its 7 MB copy; keep the WAL small.
		"-c", "max_wal_size=64MB",
		"-c", "min_wal_size=32MB",
		"-c", "logging_collector=off",
		"-c", "log_destination=stderr",
	}
}

// start launches the postmaster and waits until it accepts connections.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return fmt.Errorf("pgtest: server %s is already running", s.Addr())
	}
	deadline := time.Now().Add(startTimeout)
	for {
		err := s.startOnce(deadline)
		if !errors.Is(err, errBusy) || time.Now().After(deadline) {
			return err
		}
		// The processes of a killed server may still hold its shared
		// memory for a moment.
		time.Sleep(20 * time.Millisecond)
	}
}

// errBusy says a killed server's processes have not all exited yet.
var errBusy = errors.New("the previous server's processes are still running")

func (s *Server) startOnce(deadline time.Time) error {
	log, err := os.OpenFile(s.logPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	logStart, _ := log.Seek(0, io.SeekEnd)
	cmd := exec.Command(s.env.postgres, s.argv()...)
	cmd.Dir = s.dir
	// A file, not a pipe: Wait must not wait for the backends that
	// inherit it.
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = s.env.owner.SysProcAttr()
	err = cmd.Start()
	log.Close()
	if err != nil {
		return fmt.Errorf("pgtest: cannot start %s: %w. Run `make test`, which installs PostgreSQL", s.env.postgres, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	if err := waitReady(s.dsn("postgres"), exited, deadline); err != nil {
		killTree(cmd.Process.Pid)
		<-exited
		out := s.logSince(logStart)
		switch {
		case strings.Contains(out, "Address already in use"):
			return fmt.Errorf("pgtest: %s: %w", s.Addr(), dbtest.ErrPortTaken)
		case strings.Contains(out, "pre-existing shared memory block") || strings.Contains(out, "lock file"):
			return fmt.Errorf("pgtest: server in %s did not start: %w\nlog:\n%s", s.dir, errBusy, out)
		}
		return fmt.Errorf("pgtest: server on %s did not start: %v\nlog (%s):\n%s\n"+
			"Run `make test`, which installs a working PostgreSQL", s.Addr(), err, s.logPath(), out)
	}
	s.cmd, s.exited = cmd, exited
	return nil
}

// waitReady pings dsn until the server answers, the process exits or the
// deadline passes.
func waitReady(dsn string, exited <-chan struct{}, deadline time.Time) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready within %v: %w", startTimeout, err)
		}
		select {
		case <-exited:
			return errors.New("process exited")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// logSince returns the log written from offset on, at most its last 4000
// bytes.
func (s *Server) logSince(offset int64) string {
	b, _ := os.ReadFile(s.logPath())
	if offset < int64(len(b)) {
		b = b[offset:]
	} else {
		b = nil
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// halt stops the running server, if any: with SIGKILL to all its processes
// when kill is set, else with a fast shutdown (SIGINT), killing it if
// that takes longer than stopTimeout. It waits until the postmaster has
// exited.
func (s *Server) halt(kill bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	pid := s.cmd.Process.Pid
	if kill {
		killTree(pid)
	} else {
		s.cmd.Process.Signal(syscall.SIGINT)
	}
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		killTree(pid)
		<-s.exited
	}
	s.cmd, s.exited = nil, nil
}

// running reports whether the server is up (not killed or stopped).
func (s *Server) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// stop shuts the server down and removes its directory. The shutdown is a
// clean one, which takes a few milliseconds: a killed server leaves its
// System V shared memory segment behind, which removeShm then removes.
func (s *Server) stop() {
	s.halt(false)
	removeShm(filepath.Join(s.dir, "data"))
	os.RemoveAll(s.dir)
}

func (s *Server) mustOwn(tb testing.TB, method string) {
	tb.Helper()
	if s.shared {
		tb.Fatalf("pgtest: %s on the shared server would break the other tests; use pgtest.Start for a server of the test's own", method)
	}
}

// Kill kills the server with SIGKILL, as a crash would: the postmaster and
// all its processes at once. It returns when the postmaster has exited.
// Committed transactions survive; [Server.Restart] recovers them. Killing a
// server that is not running does nothing. Kill calls tb.Fatalf on the
// [Shared] server.
func (s *Server) Kill(tb testing.TB) {
	tb.Helper()
	s.mustOwn(tb, "Kill")
	s.halt(true)
}

// Stop shuts the server down cleanly (a fast shutdown: open transactions are
// rolled back) and waits until it has exited. Stopping a server that is not
// running does nothing. Stop calls tb.Fatalf on the [Shared] server.
func (s *Server) Stop(tb testing.TB) {
	tb.Helper()
	s.mustOwn(tb, "Stop")
	s.halt(false)
}

// Restart starts a killed or stopped server again on the same port and data
// directory, and waits until it accepts connections (after crash recovery
// when it was killed). Clients see their old connections fail and new ones
// succeed. Connections opened before are dead, and a [database/sql] pool
// may still hand one out: pgx notices only when it next uses it, and the
// statement fails with it (with a "terminating connection" or connection
// reset error). Open a new [sql.DB] after Restart, or retry. Restart calls
// tb.Fatalf when the server is running, cannot be started, or is the
// [Shared] one; call it from the test's goroutine.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	s.mustOwn(tb, "Restart")
	if err := dbtest.Rebind(s.start); err != nil {
		tb.Fatalf("%v", err)
	}
}

package mysqltest

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

	"github.com/go-sql-driver/mysql"

	"github.com/sngen/sn/internal/dbtest"
)

const (
	// startTimeout bounds how long a server may take to accept connections,
	// crash recovery included.
	startTimeout = 30 * time.Second
	// stopTimeout bounds a clean shutdown, after which the server is killed.
	stopTimeout = 30 * time.Second
)

// Server is a MariaDB server (one mariadbd process) listening on 127.0.0.1,
// with its Unix socket and data in a directory of its own. Its account can
// create and drop databases and users, and grant anything. Its methods are
// safe for concurrent use.
type Server struct {
	env    *env
	dir    string // the server's directory: data/, the socket, mariadbd.log
	port   int
	shared bool // by the whole package: not to be killed or restarted

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
}

// newServer copies the template into a directory of the new server's own
// and starts it on a free port.
func (e *env) newServer() (_ *Server, err error) {
	dir, err := e.owner.NewServerDir(e.root, e.template)
	if err != nil {
		return nil, fmt.Errorf("mysqltest: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	var s *Server
	err = dbtest.OnFreePort("mysqltest", func(port int) error {
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

// Dir returns the server's directory. Its log is mariadbd.log there and its
// data directory is data/.
func (s *Server) Dir() string { return s.dir }

func (s *Server) logPath() string { return filepath.Join(s.dir, "mariadbd.log") }

func (s *Server) argv() []string {
	return []string{
		// Read no my.cnf: only these settings count.
		"--no-defaults",
		"--datadir=" + filepath.Join(s.dir, "data"),
		"--tmpdir=" + s.dir,
		"--socket=" + filepath.Join(s.dir, "mysqld.sock"),
		"--pid-file=" + filepath.Join(s.dir, "mariadbd.pid"),
		"--port=" + strconv.Itoa(s.port),
		"--bind-address=127.0.0.1",
		"--skip-name-resolve",
		// Durability: COMMIT returns once the redo log is written and
		// flushed, so SIGKILL loses nothing committed.
		"--innodb-flush-log-at-trx-commit=1",
		"--innodb-doublewrite=1",
		"--skip-log-bin",
		logFileSize,
		"--innodb-buffer-pool-size=32M",
		"--max-connections=200",
		"--character-set-server=utf8mb4",
	}
}

// start launches mariadbd and waits until it accepts connections.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return fmt.Errorf("mysqltest: server %s is already running", s.Addr())
	}
	log, err := os.OpenFile(s.logPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("mysqltest: %w", err)
	}
	logStart, _ := log.Seek(0, io.SeekEnd)
	cmd := exec.Command(s.env.mariadbd, s.argv()...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = s.env.owner.SysProcAttr()
	err = cmd.Start()
	log.Close()
	if err != nil {
		return fmt.Errorf("mysqltest: cannot start %s: %w. Run `make test`, which installs MariaDB", s.env.mariadbd, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	if err := s.waitReady(exited); err != nil {
		cmd.Process.Kill()
		<-exited
		out := s.logSince(logStart)
		if strings.Contains(out, "Address already in use") {
			return fmt.Errorf("mysqltest: %s: %w", s.Addr(), dbtest.ErrPortTaken)
		}
		return fmt.Errorf("mysqltest: server on %s did not start: %v\nlog (%s):\n%s\n"+
			"Run `make test`, which installs a working MariaDB", s.Addr(), err, s.logPath(), out)
	}
	s.cmd, s.exited = cmd, exited
	return nil
}

// quietLogger drops the driver's messages about connections that failed
// while the server is starting.
type quietLogger struct{}

func (quietLogger) Print(...any) {}

// waitReady pings the server until it answers, the process exits or
// startTimeout passes.
func (s *Server) waitReady(exited <-chan struct{}) error {
	cfg := s.config(defaultDatabase)
	cfg.Logger = quietLogger{}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	deadline := time.Now().Add(startTimeout)
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

// halt stops the running server, if any, with sig, killing it if it takes
// longer than stopTimeout, and waits until it has exited.
func (s *Server) halt(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(sig)
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		s.cmd.Process.Kill()
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

// stop kills the server and removes its directory: nothing is kept, so
// there is nothing to shut down cleanly, and mariadbd leaves nothing
// behind outside its directory.
func (s *Server) stop() {
	s.halt(syscall.SIGKILL)
	os.RemoveAll(s.dir)
}

func (s *Server) mustOwn(tb testing.TB, method string) {
	tb.Helper()
	if s.shared {
		tb.Fatalf("mysqltest: %s on the shared server would break the other tests; use mysqltest.Start for a server of the test's own", method)
	}
}

// Kill kills the server with SIGKILL, as a crash would, and returns when it
// has exited. Committed transactions survive; [Server.Restart] recovers
// them. Killing a server that is not running does nothing. Kill calls
// tb.Fatalf on the [Shared] server.
func (s *Server) Kill(tb testing.TB) {
	tb.Helper()
	s.mustOwn(tb, "Kill")
	s.halt(syscall.SIGKILL)
}

// Stop shuts the server down cleanly (SIGTERM: open transactions are
// rolled back) and waits until it has exited. Stopping a server that is not
// running does nothing. Stop calls tb.Fatalf on the [Shared] server.
func (s *Server) Stop(tb testing.TB) {
	tb.Helper()
	s.mustOwn(tb, "Stop")
	s.halt(syscall.SIGTERM)
}

// Restart starts a killed or stopped server again on the same port and data
// directory, and waits until it accepts connections (after crash recovery
// when it was killed). Connections opened before are dead; the driver
// checks a pooled connection before using it, so a [database/sql] pool
// replaces them. Restart calls tb.Fatalf when the server is running, cannot
// be started, or is the [Shared] one; call it from the test's goroutine.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	s.mustOwn(tb, "Restart")
	if err := dbtest.Rebind(s.start); err != nil {
		tb.Fatalf("%v", err)
	}
}

package mysqltest

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sngen/sn/internal/testserver"
)

// Server is a MariaDB server (one mariadbd process) listening on 127.0.0.1,
// with its Unix socket and data in a directory of its own. Its account can
// create and drop databases and users, and grant anything. Its methods are
// safe for concurrent use.
//
// Its log is mariadbd.log in [Server.Dir], its data directory data/ there.
// [Server.Kill] kills it with SIGKILL, as a crash would; [Server.Stop] is a
// clean shutdown (SIGTERM: open transactions are rolled back). After
// [Server.Restart] the connections opened before are dead; the driver
// checks a pooled connection before using it, so a [database/sql] pool
// replaces them.
type Server struct {
	*testserver.Process
	ping *sql.DB // pings the server while it starts
	// binlog says the server writes a binary log that replicas read
	// (StartPrimary, StartReplica); a server without is provably alone.
	binlog bool
}

// newServer copies the template into a directory of the new server's own
// and starts it on a free port.
func (e *env) newServer(shared bool) (*Server, error) {
	return e.newServerOf(shared, 0)
}

// newServerOf is newServer, for a server that writes a binary log with
// server id id, when id is not 0.
func (e *env) newServerOf(shared bool, id int) (*Server, error) {
	var s *Server
	err := e.owner.StartCopy("mysqltest", e.root, e.template, func(dir string, port int) (err error) {
		s = &Server{binlog: id != 0, Process: &testserver.Process{
			Pkg: "mysqltest", Name: "MariaDB", Install: "mariadb-server",
			Bin: e.mariadbd, Args: argv(dir, port, id), WorkDir: dir, Port: port,
			Log: "mariadbd.log", Owner: e.owner,
			StartTimeout: 30 * time.Second,
			StopSignal:   syscall.SIGTERM, StopTimeout: 30 * time.Second,
			Shared: shared,
		}}
		cfg := s.config(defaultDatabase)
		cfg.Logger = quietLogger{}
		conn, err := mysql.NewConnector(cfg)
		if err != nil {
			return err
		}
		s.ping = sql.OpenDB(conn)
		s.Ready = s.pingOnce
		if err := s.Start(); err != nil {
			s.ping.Close()
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func argv(dir string, port int, id int) []string {
	// A server of Start or Shared writes no binary log, and so is
	// provably alone; StartPrimary's and StartReplica's do, with a server
	// id of their own, and GTIDs.
	binlog := []string{"--skip-log-bin"}
	if id != 0 {
		binlog = []string{"--log-bin=binlog", "--server-id=" + strconv.Itoa(id), "--binlog-format=ROW", "--log-slave-updates=ON", "--sync-binlog=1"}
	}
	// Read no my.cnf: only these settings count (the first argument).
	return append(append([]string{"--no-defaults"}, binlog...),
		"--datadir="+filepath.Join(dir, "data"),
		"--tmpdir="+dir,
		"--socket="+filepath.Join(dir, "mysqld.sock"),
		"--pid-file="+filepath.Join(dir, "mariadbd.pid"),
		"--port="+strconv.Itoa(port),
		"--bind-address=127.0.0.1",
		"--skip-name-resolve",
		// Durability: COMMIT returns once the redo log is written and
		// flushed, so SIGKILL loses nothing committed.
		"--innodb-flush-log-at-trx-commit=1",
		"--innodb-doublewrite=1",
		logFileSize,
		"--innodb-buffer-pool-size=32M",
		"--max-connections=200",
		"--character-set-server=utf8mb4",
	)
}

// quietLogger drops the driver's messages about connections that failed
// while the server is starting.
type quietLogger struct{}

func (quietLogger) Print(...any) {}

// pingOnce reports whether the server answers.
func (s *Server) pingOnce() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return s.ping.PingContext(ctx)
}

// stop kills the server and removes its directory: nothing is kept, so
// there is nothing to shut down cleanly, and mariadbd leaves nothing
// behind outside its directory.
func (s *Server) stop() {
	s.Halt(true)
	s.ping.Close()
	os.RemoveAll(s.WorkDir)
}

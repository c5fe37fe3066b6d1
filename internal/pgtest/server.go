package pgtest

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"github.com/sngen/sn/internal/testserver"
)

// Server is a PostgreSQL server (a postmaster and its processes) listening
// on 127.0.0.1, with its Unix socket and data in a directory of its own. Its
// superuser can create and drop databases and roles. Its methods are safe
// for concurrent use.
//
// Its log is postgres.log in [Server.Dir], its data directory data/ there.
// [Server.Kill] kills the postmaster and all its processes at once, as a
// crash would. [Server.Stop] is a fast shutdown: open transactions are
// rolled back. After [Server.Restart], a [database/sql] pool may still hand
// out a connection opened before: pgx notices only when it next uses it,
// and the statement fails (with a "terminating connection" or connection
// reset error). Open a new [sql.DB] after Restart, or retry.
type Server struct {
	*testserver.Process
	ping *sql.DB // pings the "postgres" database while the server starts
	name string  // a standby's application_name
	// replicas says the server may have standbys (wal_level replica); a
	// server without is provably alone (no WAL sender, no archive).
	replicas bool
}

// newServer copies the template into a directory of the new server's own
// and starts it on a free port.
func (e *env) newServer(shared bool) (*Server, error) {
	return e.newServerOf(shared, false)
}

// newServerOf is newServer, for a server that may have standbys when
// replicas is set.
func (e *env) newServerOf(shared, replicas bool) (*Server, error) {
	var s *Server
	err := e.owner.StartCopy("pgtest", e.root, e.template, func(dir string, port int) (err error) {
		s, err = e.startIn(dir, port, shared, replicas)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// startIn starts a server on port with its data in dir/data.
func (e *env) startIn(dir string, port int, shared, replicas bool) (*Server, error) {
	s := &Server{replicas: replicas, Process: &testserver.Process{
		Pkg: "pgtest", Name: "PostgreSQL", Install: "postgresql",
		Bin: e.postgres, Args: argv(dir, port, replicas), WorkDir: dir, Port: port,
		Log: "postgres.log", Owner: e.owner,
		StartTimeout: 30 * time.Second,
		StopSignal:   syscall.SIGINT, StopTimeout: 10 * time.Second,
		KillTree: true,
		// The processes of a killed server may still hold its shared
		// memory for a moment.
		Busy:   []string{"pre-existing shared memory block", "lock file"},
		Shared: shared,
	}}
	var err error
	if s.ping, err = sql.Open("pgx", s.dsn("postgres")); err != nil {
		return nil, err
	}
	s.Ready = s.pingOnce
	if err := s.Start(); err != nil {
		s.ping.Close()
		return nil, err
	}
	return s, nil
}

func argv(dir string, port int, replicas bool) []string {
	// A server started by Start or Shared is provably alone: no WAL
	// leaves it (wal_level minimal, no WAL sender, no archive), as a
	// ledger's server that never fails over should be. StartPrimary's
	// may have standbys.
	wal := []string{"-c", "wal_level=minimal", "-c", "max_wal_senders=0", "-c", "archive_mode=off"}
	if replicas {
		wal = []string{"-c", "wal_level=replica", "-c", "max_wal_senders=10", "-c", "archive_mode=off"}
	}
	return append(wal,
		"-D", filepath.Join(dir, "data"),
		"-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+dir,
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
	)
}

// pingOnce reports whether the server answers.
func (s *Server) pingOnce() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return s.ping.PingContext(ctx)
}

// stop shuts the server down and removes its directory. The shutdown is a
// clean one, which takes a few milliseconds: a killed server leaves its
// System V shared memory segment behind, which removeShm then removes.
func (s *Server) stop() {
	s.Halt(false)
	s.ping.Close()
	removeShm(filepath.Join(s.WorkDir, "data"))
	os.RemoveAll(s.WorkDir)
}

package pgtest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sngen/sn/internal/testserver"
)

// StartPrimary starts a server of the test's own, as [Start] does, that
// may have standbys ([StartStandby]): its wal_level is replica, and it has
// WAL senders. A server from [Start] or [Shared] has none, and so is
// provably alone.
func StartPrimary(tb testing.TB) *Server {
	tb.Helper()
	e := harness.Env(tb)
	s, err := e.newServerOf(false, true)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(s.stop)
	return s
}

// StartStandby starts a streaming standby of primary, a server of the
// test's own ([StartPrimary]): a base backup of it (pg_basebackup) with
// standby.signal and the primary's address, started on a port of its own,
// and waits until it streams from the primary. The standby is read-only
// until [Server.Promote]. It is stopped when the test ends.
//
// Replication is asynchronous unless the test makes it synchronous on the
// primary (synchronous_standby_names); the standby's application_name is
// its [Server.Name].
func StartStandby(tb testing.TB, primary *Server) *Server {
	tb.Helper()
	return startStandby(tb, primary, false)
}

// StartStandbySlot is [StartStandby] with a physical replication slot of
// the standby's own on the primary, named after it: while the standby is
// away, the primary keeps its WAL and shows the slot inactive.
func StartStandbySlot(tb testing.TB, primary *Server) *Server {
	tb.Helper()
	return startStandby(tb, primary, true)
}

func startStandby(tb testing.TB, primary *Server, slot bool) *Server {
	tb.Helper()
	if primary.Shared || !primary.replicas {
		tb.Fatalf("pgtest: StartStandby of %s, which sends no WAL: start the primary with pgtest.StartPrimary", primary)
	}
	e := harness.Env(tb)
	dir, err := os.MkdirTemp(e.root, "standby-")
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	if err := e.owner.Chown(dir); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	name := "standby" + strings.TrimPrefix(filepath.Base(dir), "standby-")
	conn := fmt.Sprintf("host=127.0.0.1 port=%d user=%s password=%s application_name=%s", primary.Port, superuser, password, name)
	args := []string{"--dbname", conn, "--pgdata", filepath.Join(dir, "data"),
		"--write-recovery-conf", "--wal-method", "stream", "--checkpoint", "fast", "--no-sync"}
	if slot {
		args = append(args, "--create-slot", "--slot", name)
	}
	cmd := exec.Command(filepath.Join(filepath.Dir(e.initdb), "pg_basebackup"), args...)
	cmd.SysProcAttr = e.owner.SysProcAttr()
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		tb.Fatalf("pgtest: pg_basebackup of %s: %v\n%s", primary, err, out)
	}
	var s *Server
	err = testserver.OnFreePort("pgtest", func(port int) (err error) {
		s, err = e.startIn(dir, port, false, true)
		return err
	})
	if err != nil {
		os.RemoveAll(dir)
		tb.Fatalf("%v", err)
	}
	s.name = name
	tb.Cleanup(s.stop)
	// Streaming: the primary lists it.
	db := primary.DB(tb, primary.DSN())
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		err := db.QueryRow(`SELECT count(*) FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'`, name).Scan(&n)
		if err == nil && n == 1 {
			return s
		}
		if time.Now().After(deadline) {
			tb.Fatalf("pgtest: standby %s does not stream from %s: %v\nlog:\n%s", s, primary, err, s.LogTail())
		}
	}
}

// Name returns the standby's application_name, or "" for a server that is
// not a standby.
func (s *Server) Name() string { return s.name }

// Promote makes a standby a primary (pg_promote) and waits until it
// accepts writes. It calls tb.Fatalf when it cannot.
func (s *Server) Promote(tb testing.TB) {
	tb.Helper()
	db := s.DB(tb, s.DSN())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var ok bool
	if err := db.QueryRowContext(ctx, `SELECT pg_promote(true, 60)`).Scan(&ok); err != nil || !ok {
		tb.Fatalf("pgtest: promoting %s: %v, %v\nlog:\n%s", s, ok, err, s.LogTail())
	}
}

// Disconnect stops the standby's streaming from its primary (an empty
// primary_conninfo, reloaded), as a network cut would: the primary goes
// on committing what the standby will never receive, unless it waits for
// a synchronous standby. It calls tb.Fatalf when it cannot.
func (s *Server) Disconnect(tb testing.TB) {
	tb.Helper()
	db := s.DB(tb, s.DSN())
	for _, q := range []string{`ALTER SYSTEM SET primary_conninfo = ''`, `SELECT pg_reload_conf()`} {
		if _, err := db.Exec(q); err != nil {
			tb.Fatalf("pgtest: disconnecting %s: %s: %v", s, q, err)
		}
	}
	// The walreceiver is gone once the standby reports none.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM pg_stat_wal_receiver`).Scan(&n); err == nil && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("pgtest: %s still receives WAL", s)
		}
	}
}

// MultiHostDSN returns a URL that names every server given, for the
// client to pick the one that accepts writes (target_session_attrs,
// as pgx supports): how an application follows a failover.
func MultiHostDSN(database string, servers ...*Server) string {
	var hosts []string
	for _, s := range servers {
		hosts = append(hosts, net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)))
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword(superuser, password), Host: strings.Join(hosts, ","), Path: "/" + database,
		RawQuery: "sslmode=disable&target_session_attrs=read-write&connect_timeout=2"}
	return u.String()
}

package mysqltest

import (
	"context"
	"database/sql"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// serverIDs numbers the servers that write a binary log, from 1.
var serverIDs atomic.Int64

// StartPrimary starts a server of the test's own, as [Start] does, that
// writes a binary log (ROW format, synced at each commit) for replicas
// ([StartReplica]). Replication is asynchronous unless the test turns on
// semi-synchronous replication ([Server.SemiSync]).
func StartPrimary(tb testing.TB) *Server {
	tb.Helper()
	s, err := harness.Env(tb).newServerOf(false, int(serverIDs.Add(1)))
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(s.stop)
	return s
}

// StartReplica starts a replica of primary, a server of [StartPrimary]:
// a server from the same template (so with the same data as the primary
// had when it started) that replays the primary's binary log from its
// first event, by GTID, read-only, and waits until it has caught up. With
// semiSync, the replica acknowledges events (rpl_semi_sync_slave_enabled),
// for a primary that waits for it ([Server.SemiSync]).
func StartReplica(tb testing.TB, primary *Server, semiSync bool) *Server {
	tb.Helper()
	if !primary.binlog {
		tb.Fatalf("mysqltest: StartReplica of %s, which writes no binary log: start the primary with mysqltest.StartPrimary", primary.Addr())
	}
	s := StartPrimary(tb)
	on := "OFF"
	if semiSync {
		on = "ON"
	}
	s.exec(tb, "SET GLOBAL rpl_semi_sync_slave_enabled = "+on,
		"SET GLOBAL gtid_slave_pos = ''",
		"CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = "+strconv.Itoa(primary.Port)+
			", MASTER_USER = '"+dbUser+"', MASTER_PASSWORD = '"+password+"', MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1",
		"START SLAVE",
		"SET GLOBAL read_only = ON")
	s.CatchUp(tb, primary)
	return s
}

// exec runs statements on the server, and calls tb.Fatalf when one fails.
func (s *Server) exec(tb testing.TB, stmts ...string) {
	tb.Helper()
	db := s.DB(tb, s.DSN())
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			tb.Fatalf("mysqltest: %s on %s: %v", q, s.Addr(), err)
		}
	}
}

// SemiSync turns the primary's semi-synchronous replication on or off:
// when on, a commit returns only once a semi-synchronous replica has its
// events (AFTER_SYNC), or after timeout, when the primary gives up and
// goes on asynchronously.
func (s *Server) SemiSync(tb testing.TB, on bool, timeout time.Duration) {
	tb.Helper()
	v := "OFF"
	if on {
		v = "ON"
	}
	s.exec(tb, "SET GLOBAL rpl_semi_sync_master_wait_point = AFTER_SYNC",
		"SET GLOBAL rpl_semi_sync_master_timeout = "+strconv.FormatInt(timeout.Milliseconds(), 10),
		"SET GLOBAL rpl_semi_sync_master_enabled = "+v)
}

// CatchUp waits until the replica has applied every event of primary's
// binary log, and calls tb.Fatalf when it does not within 30 seconds.
func (s *Server) CatchUp(tb testing.TB, primary *Server) {
	tb.Helper()
	var pos string
	if err := primary.DB(tb, primary.DSN()).QueryRow("SELECT @@global.gtid_binlog_pos").Scan(&pos); err != nil {
		tb.Fatalf("mysqltest: the binary log position of %s: %v", primary.Addr(), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var r sql.NullInt64
	err := s.DB(tb, s.DSN()).QueryRowContext(ctx, "SELECT MASTER_GTID_WAIT(?, 30)", pos).Scan(&r)
	if err != nil || !r.Valid || r.Int64 != 0 {
		tb.Fatalf("mysqltest: replica %s did not reach %s of %s: %v %v\nlog:\n%s", s.Addr(), pos, primary.Addr(), r, err, s.LogTail())
	}
}

// Disconnect stops the replica's reading of the primary's binary log
// (STOP SLAVE IO_THREAD), as a network cut would.
func (s *Server) Disconnect(tb testing.TB) {
	tb.Helper()
	s.exec(tb, "STOP SLAVE IO_THREAD")
}

// Promote makes a replica a primary: it stops replication, forgets the
// primary, and accepts writes.
func (s *Server) Promote(tb testing.TB) {
	tb.Helper()
	s.exec(tb, "STOP SLAVE", "RESET SLAVE ALL", "SET GLOBAL read_only = OFF")
}

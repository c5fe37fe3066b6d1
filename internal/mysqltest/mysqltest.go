// Package mysqltest starts real MariaDB servers for tests.
//
// Every test in this module that needs MySQL or MariaDB talks to a real
// MariaDB server on 127.0.0.1, started by this package on a free port with
// its data in a directory of its own, and stopped when the tests end.
// Nothing is mocked.
//
// The first server of a test binary runs mariadb-install-db once into a
// template data directory; every server after that starts from a copy of
// it, so a server takes a fraction of a second. A package starts one server
// for all its tests with [Shared], and gives each test a fresh database of
// its own with [Server.NewDatabase]:
//
//	func TestMain(m *testing.M) { mysqltest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		srv := mysqltest.Shared(t)
//		db := srv.DB(t, srv.NewDatabase(t))
//		...
//	}
//
// A test that kills or restarts its server starts one of its own with
// [Start]. The servers run InnoDB with innodb_flush_log_at_trx_commit=1, so
// [Server.Kill] (SIGKILL, as a crash would) loses no committed transaction.
//
// When the tests run as root, as they do in CI, the server runs as the
// mysql system user, which is created when missing. When MariaDB is not
// installed the tests fail (they never skip) with a message that says to run
// `make test`, which installs it.
package mysqltest

import (
	"os"
	"testing"

	"github.com/sngen/sn/internal/testserver"
)

// harness holds what a test binary shares: the directory of its servers,
// the template data directory, and the shared server.
var harness = &testserver.Harness[*env, *Server]{
	Pkg:        "mysqltest",
	NewEnv:     newEnv,
	RemoveEnv:  func(e *env) { os.RemoveAll(e.root) },
	NewServer:  (*env).newServer,
	StopServer: (*Server).stop,
}

// Main runs the tests of a package, then stops the server started by
// [Shared], removes the directory of all servers, and exits with the tests'
// status. [Shared] and [Start] need it; call it from TestMain:
//
//	func TestMain(m *testing.M) { mysqltest.Main(m) }
func Main(m *testing.M) { os.Exit(Run(m.Run)) }

// Run runs tests (m.Run, or another package's Run around it, for a test
// binary that needs both servers) and then stops the shared server and
// removes every data directory, as [Main] does; it returns tests' code.
//
//	func TestMain(m *testing.M) {
//		os.Exit(testserver.Chain(m.Run, pgtest.Run, mysqltest.Run))
//	}
func Run(tests func() int) int { return harness.Run(tests) }

// Shared returns a server started on first use and shared by all the tests
// of the package; [Main] stops it after the last test. Tests sharing it
// should each work in a database of their own ([Server.NewDatabase]); they
// cannot kill, stop or restart it. Shared calls tb.Fatalf when the server
// cannot be started, and when the package's TestMain does not call [Main].
func Shared(tb testing.TB) *Server {
	tb.Helper()
	return harness.Shared(tb)
}

// Start starts a server of the test's own and stops it, removing its data,
// when the test ends. Use it to kill or restart a server; otherwise [Shared]
// is cheaper. Start calls tb.Fatalf when the server cannot be started, and
// when the package's TestMain does not call [Main]; it never skips.
func Start(tb testing.TB) *Server {
	tb.Helper()
	return harness.Start(tb)
}

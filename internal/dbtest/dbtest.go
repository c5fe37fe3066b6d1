// Package dbtest holds what the test harnesses that start real servers
// (internal/pgtest, internal/mysqltest, internal/redistest) share: free
// ports on 127.0.0.1, and for the SQL servers the OS user a server runs as
// and that owns its data ([Owner]), the copy of a template data directory
// per server, the removal of directories left by dead test binaries, the
// names of the databases given to tests, and the [Harness] that keeps one
// server per package and removes everything when the tests end.
package dbtest

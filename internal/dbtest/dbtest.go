// Package dbtest holds what the database test harnesses (internal/pgtest,
// internal/mysqltest) share: the OS user a server runs as and owns its data
// directories ([Owner]), the copying of a template data directory, the
// removal of directories left by dead test binaries, and the names of the
// databases given to tests.
package dbtest

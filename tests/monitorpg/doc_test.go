// Package monitorpg_test tests the monitor of sn serve over a catalog in
// PostgreSQL: a catalog that does not answer (a locked table) and a
// corrupt catalog row. It is a package of its own because its TestMain
// starts PostgreSQL, which the server's other tests do not need.
package monitorpg_test

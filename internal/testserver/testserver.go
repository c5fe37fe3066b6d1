// Package testserver is the one pattern by which the tests start real
// servers: internal/pgtest, internal/mysqltest and internal/redistest (and
// the next server the project needs) are each a few settings on top of it.
//
// A harness package declares a [Harness], which gives it its Main, Run,
// Shared and Start: what the servers of a test binary share is made on
// first use, one server can be shared by the whole package, a test can
// start servers of its own, and everything is stopped and removed when the
// tests end, even the directories of test binaries that were killed. A
// test binary that needs several kinds of server runs their Run functions
// one inside the other with [Chain].
//
// Each server is a [Process]: a command that listens on a free port of
// 127.0.0.1 ([OnFreePort]), keeps its files in a directory of its own and
// its output in a log there, and answers a readiness probe. The Process
// starts it, waits for it, reads its log when it fails, and kills (as a
// crash would: SIGKILL, to its children too where they could commit),
// stops and restarts it on the same port and data; the harness package
// embeds it in its Server type. Servers that refuse to run as root run as
// a system user ([User], [Owner]), from a copy of a template data
// directory made once per test binary ([Owner.NewServerDir]), under
// /dev/shm when it has room ([BaseDir]).
package testserver

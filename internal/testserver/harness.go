package testserver

import (
	"fmt"
	"sync"
	"testing"
)

// Harness starts the servers of one kind for a test binary: E is what its
// servers share (found binaries, a template data directory), made on first
// use; S is a server. It keeps one server shared by the whole package and
// starts servers of a test's own, and [Harness.Run] removes everything when
// the tests end. A harness package declares one Harness and exports Main,
// Run, Shared and Start around it.
type Harness[E, S any] struct {
	Pkg        string                            // the harness package, for messages: "pgtest"
	NewEnv     func() (E, error)                 // makes E
	RemoveEnv  func(E)                           // removes E and every server's data
	NewServer  func(e E, shared bool) (S, error) // starts a server
	StopServer func(S)                           // stops a server and removes its data

	mu       sync.Mutex
	main     bool // Run is running the tests
	env      E
	envOK    bool
	envErr   error // why NewEnv failed
	shared   S
	sharedOK bool
	err      error // why the shared server could not be started
}

// Run runs tests and then stops the shared server and removes E; it
// returns tests' code.
func (h *Harness[E, S]) Run(tests func() int) int {
	h.mu.Lock()
	h.main = true
	h.mu.Unlock()
	code := tests()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sharedOK {
		h.StopServer(h.shared)
		var zero S
		h.shared, h.sharedOK = zero, false
	}
	if h.envOK {
		h.RemoveEnv(h.env)
		var zero E
		h.env, h.envOK = zero, false
	}
	return code
}

// Shared returns the server shared by the package, starting it on first
// use. It calls tb.Fatalf when the server cannot be started or Run is not
// running the tests.
func (h *Harness[E, S]) Shared(tb testing.TB) S {
	tb.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	e, err := h.setUp()
	if err != nil {
		tb.Fatalf("%v", err)
	}
	if !h.sharedOK && h.err == nil {
		h.shared, h.err = h.NewServer(e, true)
		h.sharedOK = h.err == nil
	}
	if h.err != nil {
		tb.Fatalf("%v", h.err)
	}
	return h.shared
}

// Start starts a server of the test's own and stops it when the test ends.
// It calls tb.Fatalf when the server cannot be started or Run is not
// running the tests; it never skips.
func (h *Harness[E, S]) Start(tb testing.TB) S {
	tb.Helper()
	s, err := h.NewServer(h.Env(tb), false)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(func() { h.StopServer(s) })
	return s
}

// Env returns what the servers share, making it on first use, for a
// harness package that starts servers of another kind than S (Redis: a
// lone server beside the shared cluster). It calls tb.Fatalf when E cannot
// be made or Run is not running the tests.
func (h *Harness[E, S]) Env(tb testing.TB) E {
	tb.Helper()
	h.mu.Lock()
	e, err := h.setUp()
	h.mu.Unlock()
	if err != nil {
		tb.Fatalf("%v", err)
	}
	return e
}

// Chain runs tests inside the Run of each harness package given, the first
// outermost, and returns tests' code, for a test binary that needs several
// kinds of server:
//
//	func TestMain(m *testing.M) {
//		os.Exit(testserver.Chain(m.Run, pgtest.Run, mysqltest.Run, redistest.Run))
//	}
func Chain(tests func() int, runs ...func(tests func() int) int) int {
	if len(runs) == 0 {
		return tests()
	}
	return runs[0](func() int { return Chain(tests, runs[1:]...) })
}

// setUp returns E, making it on first use. The caller holds h.mu.
func (h *Harness[E, S]) setUp() (E, error) {
	if !h.main {
		var zero E
		return zero, fmt.Errorf("%[1]s: the package's TestMain must be\n"+
			"\tfunc TestMain(m *testing.M) { %[1]s.Main(m) }\n"+
			"so that the servers and their data are removed when the tests end", h.Pkg)
	}
	if !h.envOK && h.envErr == nil {
		h.env, h.envErr = h.NewEnv()
		h.envOK = h.envErr == nil
	}
	return h.env, h.envErr
}

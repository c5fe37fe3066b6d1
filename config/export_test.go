package config

import "testing"

// RegisterForTest registers d under name until t ends, so that a test's
// drivers do not show in the lists of registered drivers that other tests
// and the examples print.
func RegisterForTest(t testing.TB, name string, d Driver) {
	Register(name, d)
	t.Cleanup(func() {
		driversMu.Lock()
		delete(drivers, name)
		driversMu.Unlock()
	})
}

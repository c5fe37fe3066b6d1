//go:build unix && !linux

package pgtest

// removeShm does nothing: killed servers may leave their System V shared
// memory segments behind.
func removeShm(dataDir string) {}

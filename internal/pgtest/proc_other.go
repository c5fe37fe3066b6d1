//go:build unix && !linux

package pgtest

import (
	"syscall"
)

// killTree kills the postmaster pid with SIGKILL. Its backends, each in a
// session of its own, exit when they notice.
func killTree(pid int) { syscall.Kill(pid, syscall.SIGKILL) }

// removeShm does nothing: killed servers may leave their System V shared
// memory segments behind.
func removeShm(dataDir string) {}

//go:build unix && !linux

package pgtest

import (
	"os"
	"syscall"
)

// sysProcAttr runs a process as cred (nil: as the tests' own user) in a
// process group of its own, out of reach of a terminal's Ctrl-C. Only
// Linux can tie a child's life to its parent.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true}
}

// killTree kills the postmaster pid with SIGKILL. Its backends, each in a
// session of its own, exit when they notice.
func killTree(pid int) { syscall.Kill(pid, syscall.SIGKILL) }

// removeShm does nothing: killed servers may leave their System V shared
// memory segments behind.
func removeShm(dataDir string) {}

// baseDir returns the directory under which the servers' directories go.
func baseDir() string { return os.TempDir() }

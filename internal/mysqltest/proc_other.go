//go:build unix && !linux

package mysqltest

import (
	"os"
	"syscall"
)

// sysProcAttr runs a process as cred (nil: as the tests' own user) in a
// process group of its own. Only Linux can tie a child's life to its
// parent.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true}
}

// baseDir returns the directory under which the servers' directories go.
func baseDir() string { return os.TempDir() }

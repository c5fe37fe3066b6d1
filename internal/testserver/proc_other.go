//go:build unix && !linux

package testserver

import (
	"os"
	"syscall"
)

// SysProcAttr runs a server as o in a process group of its own. Only Linux
// can tie a child's life to its parent.
func (o Owner) SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: o.Cred, Setpgid: true}
}

// BaseDir returns the directory under which the servers' directories go.
func BaseDir() string { return os.TempDir() }

// killTree kills pid with SIGKILL. Its children, each perhaps in a
// session of its own, exit when they notice.
func killTree(pid int) { syscall.Kill(pid, syscall.SIGKILL) }

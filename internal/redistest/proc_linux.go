package redistest

import "syscall"

// sysProcAttr makes the kernel kill a server when the test process dies, so
// that a crashed or timed-out test binary leaves no redis-server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

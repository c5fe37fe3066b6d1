package dbtest

import (
	"os"
	"syscall"
)

// SysProcAttr runs a server as o in a process group of its own, and makes
// the kernel kill it when the test process dies, so that a crashed or
// timed-out test binary leaves no server behind. Go sets the parent-death
// signal after changing the credential, which would otherwise clear it:
// this is why servers are started as o rather than told to switch user.
func (o Owner) SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: o.Cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// shm is where Linux mounts a tmpfs for everyone.
const shm = "/dev/shm"

// minShmFree is the free space shm needs to hold the servers' directories.
const minShmFree = 2 << 30

// BaseDir returns the directory under which the servers' directories go:
// /dev/shm when it is a tmpfs with 2 GiB free, else os.TempDir. On ext4 a
// server's thousand files take up to a second to copy and CREATE DATABASE
// as long to create; on tmpfs a tenth of that. Data in a tmpfs survives
// SIGKILL like data on disk: fsync only matters when the machine crashes.
func BaseDir() string {
	var st syscall.Statfs_t
	const tmpfsMagic = 0x01021994
	if err := syscall.Statfs(shm, &st); err == nil && st.Type == tmpfsMagic &&
		st.Bavail*uint64(st.Bsize) >= minShmFree && syscall.Access(shm, 2 /* W_OK */) == nil {
		return shm
	}
	return os.TempDir()
}

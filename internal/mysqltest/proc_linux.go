package mysqltest

import (
	"os"
	"syscall"
)

// sysProcAttr runs a process as cred (nil: as the tests' own user) in a
// process group of its own, and makes the kernel kill it when the test
// process dies, so that a crashed or timed-out test binary leaves no
// mariadbd behind. Go sets the parent-death signal after changing the
// credential, which would otherwise clear it; this is why the server is
// not given --user.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// shm is where Linux mounts a tmpfs for everyone.
const shm = "/dev/shm"

// minShmFree is the free space shm needs to hold the servers' directories.
const minShmFree = 2 << 30

// baseDir returns the directory under which the servers' directories go:
// /dev/shm when it is a tmpfs with 2 GiB free, else os.TempDir. Creating
// and copying files there is many times faster than on ext4, and data in a
// tmpfs survives SIGKILL like data on disk: fsync only matters when the
// machine crashes.
func baseDir() string {
	var st syscall.Statfs_t
	const tmpfsMagic = 0x01021994
	if err := syscall.Statfs(shm, &st); err == nil && st.Type == tmpfsMagic &&
		st.Bavail*uint64(st.Bsize) >= minShmFree && syscall.Access(shm, 2 /* W_OK */) == nil {
		return shm
	}
	return os.TempDir()
}

package testserver

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
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

// killTree kills the process pid (a postmaster) and every process it started with
// SIGKILL, as a crash of the whole server would. Killing the postmaster
// alone is no crash: its backends live on for a while, and may commit.
// They cannot be reached through a process group, each being the leader of
// a session of its own, so they are found by their parent; the postmaster
// is stopped first so that it starts no other and they stay its children
// until they are killed. killTree returns when they have exited (they may
// be zombies), and so hold no shared memory, or after five seconds.
func killTree(pid int) {
	var kids []int
	if syscall.Kill(pid, syscall.SIGSTOP) == nil && waitStopped(pid) {
		kids = children(pid)
		for _, c := range kids {
			syscall.Kill(c, syscall.SIGKILL)
		}
	}
	syscall.Kill(pid, syscall.SIGKILL)
	deadline := time.Now().Add(5 * time.Second)
	for _, c := range kids {
		id := strconv.Itoa(c)
		for time.Now().Before(deadline) {
			if f := procStat(id); len(f) == 0 || f[0] == "Z" {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// procStat returns the fields of /proc/pid/stat after the command name:
// state, ppid, ...
func procStat(pid string) []string {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// waitStopped waits until the process is stopped (state T), for a second
// at most.
func waitStopped(pid int) bool {
	id := strconv.Itoa(pid)
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		if f := procStat(id); len(f) > 0 && f[0] == "T" {
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// children returns the processes whose parent is pid.
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	parent := strconv.Itoa(pid)
	var pids []int
	for _, e := range entries {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := procStat(e.Name()); len(f) > 1 && f[1] == parent {
			pids = append(pids, c)
		}
	}
	return pids
}

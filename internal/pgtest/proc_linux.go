package pgtest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// killTree kills the postmaster pid and every process it started with
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

// removeShm removes the System V shared memory segment of a killed server
// whose data directory is dataDir, unless it is in use. A server removes it
// when it stops, or when it starts again in dataDir; a server killed for
// good would leave it until the machine restarts. postmaster.pid names it
// on its seventh line: "key id".
func removeShm(dataDir string) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 7 {
		return
	}
	f := strings.Fields(lines[6])
	if len(f) != 2 {
		return
	}
	key, err1 := strconv.ParseInt(f[0], 10, 64)
	id, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return
	}
	var desc unix.SysvShmDesc
	if _, err := unix.SysvShmCtl(id, unix.IPC_STAT, &desc); err != nil || int64(desc.Perm.Key) != key || desc.Nattch != 0 {
		return
	}
	unix.SysvShmCtl(id, unix.IPC_RMID, nil)
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

package pgtest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

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

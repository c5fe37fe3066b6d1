package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/sngen/sn/internal/testserver"
)

const (
	// osUser runs initdb and the servers when the tests run as root.
	osUser = "postgres"
	// superuser and password are the database superuser the servers are
	// made with, reached over TCP with SCRAM-SHA-256.
	superuser = "pgtest"
	password  = "pgtest"
)

// env is what the servers of one test binary share.
type env struct {
	initdb, postgres string           // binaries
	owner            testserver.Owner // the tests' own user unless they run as root
	root             string           // directory of the template and the servers
	template         string           // initdb's data directory
}

// newEnv finds the binaries, the OS user, and runs initdb into a template
// data directory under a new directory of the test binary.
func newEnv() (_ *env, err error) {
	e := &env{}
	if e.initdb, e.postgres, err = findBinaries(binDirGlob); err != nil {
		return nil, err
	}
	if e.owner, err = testserver.User(osUser, "PostgreSQL", "postgresql"); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if e.root, err = e.owner.NewRoot("pgtest", func(d string) {
		datas, _ := filepath.Glob(filepath.Join(d, "server-*", "data"))
		for _, data := range datas {
			removeShm(data)
		}
	}); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(e.root)
		}
	}()
	dir := filepath.Join(e.root, "template")
	if err := e.owner.Mkdir(dir); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	pwfile := filepath.Join(dir, "pwfile")
	if err := e.owner.WriteFile(pwfile, password+"\n"); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	e.template = filepath.Join(dir, "data")
	cmd := exec.Command(e.initdb,
		"--pgdata", e.template,
		"--username", superuser,
		"--pwfile", pwfile,
		"--auth-local", "trust",
		"--auth-host", "scram-sha-256",
		"--encoding", "UTF8",
		"--locale", "C",
		// The template is copied, never run; the servers fsync.
		"--no-sync",
		"--no-instructions")
	cmd.Dir = dir
	cmd.SysProcAttr = e.owner.SysProcAttr()
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pgtest: %s failed after %v: %v\n%s\nRun `make test`, which installs a working PostgreSQL",
			e.initdb, time.Since(start).Round(time.Millisecond), err, out)
	}
	os.Remove(pwfile)
	return e, nil
}

// binDirGlob matches the directories where Debian installs each major
// version of PostgreSQL.
const binDirGlob = "/usr/lib/postgresql/*/bin"

// findBinaries returns the paths of initdb and postgres, from the newest
// version matched by dirGlob, else from $PATH.
func findBinaries(dirGlob string) (initdb, postgres string, err error) {
	dirs, _ := filepath.Glob(dirGlob)
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		initdb, postgres = filepath.Join(d, "initdb"), filepath.Join(d, "postgres")
		if isExecutable(initdb) && isExecutable(postgres) {
			return initdb, postgres, nil
		}
	}
	if initdb, err = exec.LookPath("initdb"); err == nil {
		if postgres, err = exec.LookPath("postgres"); err == nil {
			return initdb, postgres, nil
		}
	}
	return "", "", fmt.Errorf("pgtest: PostgreSQL's initdb and postgres not found in %s or $PATH (%v).\n"+
		"!!! The tests need a real PostgreSQL 15 server on this machine. Run `make test` at the repository root:\n"+
		"!!! it installs postgresql (apt-get install postgresql) and then runs go test -race ./...", dirGlob, err)
}

// versionOf returns the major version in a path like
// /usr/lib/postgresql/15/bin, or 0.
func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

package pgtest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	// osUser runs initdb and the servers when the tests run as root.
	osUser = "postgres"
	// superuser and password are the database superuser the servers are
	// made with, reached over TCP with SCRAM-SHA-256.
	superuser = "pgtest"
	password  = "pgtest"
	// dirPrefix starts the name of a test binary's directory under
	// baseDir; the binary's process ID follows.
	dirPrefix = "pgtest-"
)

// env is what the servers of one test binary share.
type env struct {
	initdb, postgres string              // binaries
	cred             *syscall.Credential // nil unless the tests run as root
	root             string              // directory of the template and the servers
	template         string              // initdb's data directory
}

// newEnv finds the binaries, the OS user, and runs initdb into a template
// data directory under a new directory of the test binary.
func newEnv() (_ *env, err error) {
	e := &env{}
	if e.initdb, e.postgres, err = findBinaries(binDirGlob); err != nil {
		return nil, err
	}
	if e.cred, err = credential(osUser); err != nil {
		return nil, err
	}
	base := baseDir()
	removeStale(base)
	if e.root, err = os.MkdirTemp(base, dirPrefix+strconv.Itoa(os.Getpid())+"-"); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(e.root)
		}
	}()
	// The OS user must reach the directories inside, but not list them.
	if err := os.Chmod(e.root, 0o711); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	dir, err := e.mkdir("template")
	if err != nil {
		return nil, err
	}
	pwfile := filepath.Join(dir, "pwfile")
	if err := e.writeFile(pwfile, password+"\n"); err != nil {
		return nil, err
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
	cmd.SysProcAttr = sysProcAttr(e.cred)
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

// credential returns nil when the tests do not run as root, and otherwise
// the credential of the system user name, which is created when missing.
func credential(name string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		var unknown user.UnknownUserError
		if !errors.As(err, &unknown) {
			return nil, fmt.Errorf("pgtest: looking up user %s: %w", name, err)
		}
		useradd, lerr := exec.LookPath("useradd")
		if lerr != nil {
			useradd = "/usr/sbin/useradd"
		}
		out, aerr := exec.Command(useradd, "--system", "--user-group", "--no-create-home",
			"--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
		// Another test binary may have created it in the meantime.
		if u, err = user.Lookup(name); err != nil {
			return nil, fmt.Errorf("pgtest: PostgreSQL refuses to run as root and there is no user %s to run it as; "+
				"creating one failed: %v\n%s\nRun `make test`, which installs postgresql and so creates the user", name, aerr, out)
		}
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pgtest: user %s: uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pgtest: user %s: gid %q: %w", name, u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// removeStale removes the directories left in base by test binaries that
// died without cleaning up (killed, or timed out).
func removeStale(base string) {
	dirs, _ := filepath.Glob(filepath.Join(base, dirPrefix+"*-*"))
	for _, d := range dirs {
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(filepath.Base(d), dirPrefix), "-", 2)[0])
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			datas, _ := filepath.Glob(filepath.Join(d, "server-*", "data"))
			for _, data := range datas {
				removeShm(data)
			}
			os.RemoveAll(d)
		}
	}
}

// mkdir makes a directory under root owned by the OS user.
func (e *env) mkdir(name string) (string, error) {
	dir := filepath.Join(e.root, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	return dir, e.chown(dir)
}

func (e *env) writeFile(path, content string) error {
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	return e.chown(path)
}

func (e *env) chown(path string) error {
	if e.cred == nil {
		return nil
	}
	if err := os.Lchown(path, int(e.cred.Uid), int(e.cred.Gid)); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	return nil
}

// copyTree copies the directory src to dst, which must not exist, keeping
// the permissions and giving everything to the OS user.
func (e *env) copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			err = os.Mkdir(target, 0o700)
		case info.Mode().IsRegular():
			err = copyFile(path, target)
		default:
			err = fmt.Errorf("pgtest: cannot copy %s: not a file or directory", path)
		}
		if err == nil {
			err = os.Chmod(target, info.Mode().Perm())
		}
		if err == nil {
			err = e.chown(target)
		}
		return err
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

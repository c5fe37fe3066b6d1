package mysqltest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	// osUser runs mariadb-install-db and the servers when the tests run as
	// root.
	osUser = "mysql"
	// dbUser and password are the account the servers are made with,
	// allowed everything (WITH GRANT OPTION) from 127.0.0.1.
	dbUser   = "mysqltest"
	password = "mysqltest"
	// defaultDatabase is the empty database of [Server.DSN].
	defaultDatabase = "test"
	// dirPrefix starts the name of a test binary's directory under
	// baseDir; the binary's process ID follows.
	dirPrefix = "mysqltest-"
	// logFileSize is InnoDB's redo log size: the default 96 MiB would be
	// copied for every server.
	logFileSize = "--innodb-log-file-size=8M"
)

// setupSQL runs after the system tables are made. In bootstrap mode the
// grant tables must be loaded (FLUSH PRIVILEGES) before CREATE USER.
const setupSQL = `FLUSH PRIVILEGES;
CREATE USER '` + dbUser + `'@'127.0.0.1' IDENTIFIED BY '` + password + `';
GRANT ALL PRIVILEGES ON *.* TO '` + dbUser + `'@'127.0.0.1' WITH GRANT OPTION;
CREATE DATABASE ` + defaultDatabase + `;
`

// env is what the servers of one test binary share.
type env struct {
	installDB, mariadbd string              // binaries
	cred                *syscall.Credential // nil unless the tests run as root
	root                string              // directory of the template and the servers
	template            string              // mariadb-install-db's data directory
}

// installDBNames and mariadbdNames are where Debian and others install the
// binaries, best first; bare names are looked up in $PATH.
var (
	installDBNames = []string{"mariadb-install-db", "/usr/bin/mariadb-install-db", "mysql_install_db", "/usr/bin/mysql_install_db"}
	mariadbdNames  = []string{"mariadbd", "/usr/sbin/mariadbd", "mysqld", "/usr/sbin/mysqld"}
)

// newEnv finds the binaries, the OS user, and runs mariadb-install-db into
// a template data directory under a new directory of the test binary.
func newEnv() (_ *env, err error) {
	e := &env{}
	if e.installDB, e.mariadbd, err = findBinaries(installDBNames, mariadbdNames); err != nil {
		return nil, err
	}
	if e.cred, err = credential(osUser); err != nil {
		return nil, err
	}
	base := baseDir()
	removeStale(base)
	if e.root, err = os.MkdirTemp(base, dirPrefix+strconv.Itoa(os.Getpid())+"-"); err != nil {
		return nil, fmt.Errorf("mysqltest: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(e.root)
		}
	}()
	// The OS user must reach the directories inside, but not list them.
	if err := os.Chmod(e.root, 0o711); err != nil {
		return nil, fmt.Errorf("mysqltest: %w", err)
	}
	dir, err := e.mkdir("template")
	if err != nil {
		return nil, err
	}
	setup := filepath.Join(dir, "setup.sql")
	if err := e.writeFile(setup, setupSQL); err != nil {
		return nil, err
	}
	e.template = filepath.Join(dir, "data")
	cmd := exec.Command(e.installDB,
		"--no-defaults",
		"--datadir="+e.template,
		// root gets no unix_socket authentication: the server does not
		// run as root. It is not used; dbUser is.
		"--auth-root-authentication-method=normal",
		"--skip-test-db",
		"--skip-name-resolve",
		"--extra-file="+setup,
		// Passed on to mariadbd --bootstrap.
		logFileSize)
	cmd.Dir = dir
	cmd.SysProcAttr = sysProcAttr(e.cred)
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mysqltest: %s failed after %v: %v\n%s\nRun `make test`, which installs a working MariaDB",
			e.installDB, time.Since(start).Round(time.Millisecond), err, out)
	}
	return e, nil
}

// findBinaries returns the paths of the first of installDBNames and of
// mariadbdNames that exist.
func findBinaries(installDBNames, mariadbdNames []string) (installDB, mariadbd string, err error) {
	installDB, err1 := lookPath(installDBNames)
	mariadbd, err2 := lookPath(mariadbdNames)
	if err = errors.Join(err1, err2); err != nil {
		return "", "", fmt.Errorf("mysqltest: MariaDB not found (%v).\n"+
			"!!! The tests need a real MariaDB 10.11 server on this machine. Run `make test` at the repository root:\n"+
			"!!! it installs mariadb-server (apt-get install mariadb-server) and then runs go test -race ./...", err)
	}
	return installDB, mariadbd, nil
}

func lookPath(names []string) (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("none of %s", strings.Join(names, ", "))
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
			return nil, fmt.Errorf("mysqltest: looking up user %s: %w", name, err)
		}
		useradd, lerr := exec.LookPath("useradd")
		if lerr != nil {
			useradd = "/usr/sbin/useradd"
		}
		out, aerr := exec.Command(useradd, "--system", "--user-group", "--no-create-home",
			"--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
		// Another test binary may have created it in the meantime.
		if u, err = user.Lookup(name); err != nil {
			return nil, fmt.Errorf("mysqltest: the server does not run as root and there is no user %s to run it as; "+
				"creating one failed: %v\n%s\nRun `make test`, which installs mariadb-server and so creates the user", name, aerr, out)
		}
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("mysqltest: user %s: uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("mysqltest: user %s: gid %q: %w", name, u.Gid, err)
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
			os.RemoveAll(d)
		}
	}
}

// mkdir makes a directory under root owned by the OS user.
func (e *env) mkdir(name string) (string, error) {
	dir := filepath.Join(e.root, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("mysqltest: %w", err)
	}
	return dir, e.chown(dir)
}

func (e *env) writeFile(path, content string) error {
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return fmt.Errorf("mysqltest: %w", err)
	}
	return e.chown(path)
}

func (e *env) chown(path string) error {
	if e.cred == nil {
		return nil
	}
	if err := os.Lchown(path, int(e.cred.Uid), int(e.cred.Gid)); err != nil {
		return fmt.Errorf("mysqltest: %w", err)
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
			err = fmt.Errorf("mysqltest: cannot copy %s: not a file or directory", path)
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

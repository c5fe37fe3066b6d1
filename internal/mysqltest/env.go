package mysqltest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/sngen/sn/internal/testserver"
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
	installDB, mariadbd string           // binaries
	owner               testserver.Owner // the tests' own user unless they run as root
	root                string           // directory of the template and the servers
	template            string           // mariadb-install-db's data directory
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
	if e.owner, err = testserver.User(osUser, "MariaDB", "mariadb-server"); err != nil {
		return nil, fmt.Errorf("mysqltest: %w", err)
	}
	if e.root, err = e.owner.NewRoot("mysqltest", nil); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(e.root)
		}
	}()
	dir := filepath.Join(e.root, "template")
	if err := e.owner.Mkdir(dir); err != nil {
		return nil, fmt.Errorf("mysqltest: %w", err)
	}
	setup := filepath.Join(dir, "setup.sql")
	if err := e.owner.WriteFile(setup, setupSQL); err != nil {
		return nil, fmt.Errorf("mysqltest: %w", err)
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
		// Passed on to mariadbd --bootstrap. A temporary directory of its
		// own: a MariaDB starting in another test process deletes the
		// temporary tables it finds in its tmpdir, /tmp by default, and
		// with them this bootstrap's (ERROR: 1051 Unknown table
		// 'mysql.tmp_user_sys').
		"--tmpdir="+dir,
		logFileSize)
	cmd.Dir = dir
	cmd.SysProcAttr = e.owner.SysProcAttr()
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

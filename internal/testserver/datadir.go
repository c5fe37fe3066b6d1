package testserver

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
)

// Owner is the OS user that owns a server's files and runs the server.
// The zero Owner is the tests' own user.
type Owner struct {
	Cred *syscall.Credential // nil: the tests' own user
}

// User returns the zero Owner when the tests do not run as root, and
// otherwise the system user name, created when missing: database servers
// refuse to run as root. server and pkg name the server and the Debian
// package that creates the user, for the error message.
func User(name, server, pkg string) (Owner, error) {
	if os.Geteuid() != 0 {
		return Owner{}, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		var unknown user.UnknownUserError
		if !errors.As(err, &unknown) {
			return Owner{}, fmt.Errorf("looking up user %s: %w", name, err)
		}
		useradd, lerr := exec.LookPath("useradd")
		if lerr != nil {
			useradd = "/usr/sbin/useradd"
		}
		out, aerr := exec.Command(useradd, "--system", "--user-group", "--no-create-home",
			"--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
		// Another test binary may have created it in the meantime.
		if u, err = user.Lookup(name); err != nil {
			return Owner{}, fmt.Errorf("%s refuses to run as root and there is no user %s to run it as; "+
				"creating one failed: %v\n%s\nRun `make test`, which installs %s and so creates the user", server, name, aerr, out, pkg)
		}
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return Owner{}, fmt.Errorf("user %s: uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return Owner{}, fmt.Errorf("user %s: gid %q: %w", name, u.Gid, err)
	}
	return Owner{Cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}, nil
}

// RemoveStale removes the directories base/prefix<pid>-* left by test
// binaries that died without cleaning up (killed, or timed out), calling
// clean (if not nil) on each first.
func RemoveStale(base, prefix string, clean func(dir string)) {
	dirs, _ := filepath.Glob(filepath.Join(base, prefix+"*-*"))
	for _, d := range dirs {
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(filepath.Base(d), prefix), "-", 2)[0])
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			if clean != nil {
				clean(d)
			}
			os.RemoveAll(d)
		}
	}
}

// Mkdir makes the directory path, private to o.
func (o Owner) Mkdir(path string) error {
	if err := os.Mkdir(path, 0o700); err != nil {
		return err
	}
	return o.Chown(path)
}

// WriteFile writes content to path, private to o.
func (o Owner) WriteFile(path, content string) error {
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return err
	}
	return o.Chown(path)
}

// Chown gives path to o.
func (o Owner) Chown(path string) error {
	if o.Cred == nil {
		return nil
	}
	return os.Lchown(path, int(o.Cred.Uid), int(o.Cred.Gid))
}

// CopyTree copies the directory src to dst, which must not exist, keeping
// the permissions and giving everything to o.
func (o Owner) CopyTree(src, dst string) error {
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
			err = fmt.Errorf("cannot copy %s: not a file or directory", path)
		}
		if err == nil {
			err = os.Chmod(target, info.Mode().Perm())
		}
		if err == nil {
			err = o.Chown(target)
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

// StartCopy starts a new server from a copy of the template data
// directory: it makes a directory server-* under root, owned by o, copies
// template to data/ there, and calls start with the directory and free
// ports until one works ([OnFreePort]). It removes the directory when
// start fails; pkg names the harness in errors.
func (o Owner) StartCopy(pkg, root, template string, start func(dir string, port int) error) (err error) {
	dir, err := os.MkdirTemp(root, "server-")
	if err != nil {
		return fmt.Errorf("%s: %w", pkg, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	if err := o.Chown(dir); err != nil {
		return fmt.Errorf("%s: %w", pkg, err)
	}
	if err := o.CopyTree(template, filepath.Join(dir, "data")); err != nil {
		return fmt.Errorf("%s: copying the template data directory: %w", pkg, err)
	}
	return OnFreePort(pkg, func(port int) error { return start(dir, port) })
}

// NewRoot makes the directory of a test binary's servers of one kind,
// BaseDir()/pkg-<pid>-*, reachable but not listable by o, after removing
// those left by dead test binaries (calling clean, if not nil, on each
// first).
func (o Owner) NewRoot(pkg string, clean func(dir string)) (string, error) {
	base := BaseDir()
	prefix := pkg + "-"
	RemoveStale(base, prefix, clean)
	root, err := os.MkdirTemp(base, prefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", fmt.Errorf("%s: %w", pkg, err)
	}
	// o must reach the directories inside, but not list them.
	if err := os.Chmod(root, 0o711); err != nil {
		os.RemoveAll(root)
		return "", fmt.Errorf("%s: %w", pkg, err)
	}
	return root, nil
}

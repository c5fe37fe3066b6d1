package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// A store file is identified by what it is, not how it is spelled: two
// paths that reach one file — through a symbolic link, a hard link, a
// bind mount, "..", or a directory given two ways — are one store, shared
// by one open, and two tenants that reach it are caught ([Config.Validate]), instead of opening it twice (bbolt's lock then refuses the
// second open as "in use by another process": itself).

// files maps a file's identity (device and inode) to the first path it
// was seen at, so that every spelling of it gets that one.
var files sync.Map // fileID -> string

type fileID struct{ dev, ino uint64 }

// File returns the path of the store file at path, resolved against t.Dir,
// as a driver's StoreInfo.ID and [Share] key give it: absolute, every
// symbolic link of it and its directories resolved, and, for a file that
// exists, the first path this process saw it at (a hard link or a bind
// mount of it is the same file). A file is then one store however it is
// spelled: two spellings share one open, and two tenants that reach one
// file are caught by [Config.Validate].
func (t *Target) File(path string) (string, error) {
	abs, err := t.Abs(path)
	if err != nil {
		return "", err
	}
	real, err := resolve(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return real, nil // made at the first open: its directory is resolved
	}
	id, ok := identity(fi)
	if !ok {
		return real, nil
	}
	for {
		v, loaded := files.LoadOrStore(id, real)
		if !loaded {
			return real, nil
		}
		first := v.(string)
		if ffi, err := os.Stat(first); err == nil && os.SameFile(fi, ffi) {
			return first, nil
		}
		// The file first seen there is gone, and its inode is another's.
		files.CompareAndSwap(id, first, real)
	}
}

// resolve returns abs with the symbolic links of its longest existing
// prefix resolved: a file that does not exist yet is resolved through its
// directory, and through a link to it that dangles until it is made.
func resolve(abs string) (string, error) {
	return resolveDepth(abs, 0)
}

func resolveDepth(abs string, depth int) (string, error) {
	rest := ""
	for p := abs; ; {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			// A link to what does not exist yet: followed.
			if depth == 40 {
				return "", &fs.PathError{Op: "resolve", Path: abs, Err: errors.New("too many links")}
			}
			target, err := os.Readlink(p)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(p), target)
			}
			return resolveDepth(filepath.Join(target, rest), depth+1)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// CheckFile is the Check of a driver whose store is one file, such as
// bolt's and sqlite's: the sequence's path is required, and the store is
// the file at it, whatever its spelling ([Target.File]), given as backend
// and the file ("bolt /var/lib/sn/sn.db"), which is also the file's
// [Share] key. The driver reads path and the [SegmentFields].
func CheckFile(t *Target, backend string) (StoreInfo, error) {
	st := StoreInfo{Durable: true, Fields: append([]string{"path"}, SegmentFields()...)}
	var f struct {
		Path string `yaml:"path"`
	}
	if err := t.Decode(&f); err != nil {
		return st, err
	}
	if f.Path == "" {
		return st, &Error{Field: "path", Err: fmt.Errorf("the %s backend needs a file (set path here or in store)", backend)}
	}
	abs, err := t.File(f.Path)
	if err != nil {
		return st, &Error{Field: "path", Err: err}
	}
	st.ID = backend + " " + abs
	return st, nil
}

//go:build unix

package config

import (
	"io/fs"
	"syscall"
)

// identity returns the device and inode of the file fi describes.
func identity(fi fs.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, true
}

//go:build unix

package sessionfs

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

func isSeparator(c byte) bool { return c == '/' }

// OpenDir opens the folder name as a bare descriptor (O_DIRECTORY,
// close-on-exec).
func (OSFS) OpenDir(name string) (Dir, error) {
	for {
		fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		switch {
		case err == nil:
			return &fdDir{fd: fd, name: name}, nil
		case err != syscall.EINTR:
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
}

// fdDir is a folder kept open as a bare descriptor.
type fdDir struct {
	fd   int
	name string
}

// OpenFile opens path with openat(2) relative to the folder, retrying an
// interrupted call, as openFile does by path.
func (d *fdDir) OpenFile(path string, flag int, perm fs.FileMode) (File, error) {
	rel := below(d.name, path)
	if rel == "" {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errNotBelow}
	}
	for {
		fd, err := unix.Openat(d.fd, rel, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		switch {
		case err == nil:
			return &fdFile{fd: fd, name: path}, nil
		case err != syscall.EINTR:
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
}

// Unlink removes path with unlinkat(2) relative to the folder.
func (d *fdDir) Unlink(path string) error {
	rel := below(d.name, path)
	if rel == "" {
		return &fs.PathError{Op: "unlink", Path: path, Err: errNotBelow}
	}
	for {
		err := unix.Unlinkat(d.fd, rel, 0)
		switch {
		case err == nil:
			return nil
		case err != syscall.EINTR:
			return &fs.PathError{Op: "unlink", Path: path, Err: err}
		}
	}
}

// Close closes the descriptor.
func (d *fdDir) Close() error {
	if err := syscall.Close(d.fd); err != nil {
		return &fs.PathError{Op: "close", Path: d.name, Err: err}
	}
	return nil
}

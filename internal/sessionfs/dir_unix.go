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
	fd, err := openAt(unix.AT_FDCWD, name, name, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	return &fdDir{fd: fd, name: name}, nil
}

// fdDir is a folder kept open as a bare descriptor.
type fdDir struct {
	fd   int
	name string
}

// OpenFile opens path relative to the folder, as openFile does by path.
func (d *fdDir) OpenFile(path string, flag int, perm fs.FileMode) (File, error) {
	rel := below(d.name, path)
	if rel == "" {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errNotBelow}
	}
	fd, err := openAt(d.fd, rel, path, flag, perm)
	if err != nil {
		return nil, err
	}
	return &fdFile{fd: fd, name: path}, nil
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

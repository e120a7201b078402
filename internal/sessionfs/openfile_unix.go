//go:build unix

package sessionfs

import (
	"io/fs"
	"os"
	"syscall"
)

// openFile is os.OpenFile for a log or temporary file without the
// runtime poller: os.OpenFile offers every file to the poller, which costs
// four more system calls (two flag changes there and back, and an
// epoll_ctl a regular file always refuses), while os.NewFile of a blocking
// descriptor costs one check. It retries an interrupted open as
// os.OpenFile does and fails with the same *fs.PathError.
func openFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	for {
		fd, err := syscall.Open(name, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), name), nil
		case err != syscall.EINTR:
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
}

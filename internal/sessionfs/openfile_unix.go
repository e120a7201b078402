//go:build unix

package sessionfs

import (
	"io"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openFile opens a log or temporary file as a bare descriptor (fdFile):
// os.OpenFile offers every file to the runtime poller, which costs four
// more system calls (two flag changes there and back, and an epoll_ctl a
// regular file always refuses), and even os.NewFile of a blocking
// descriptor costs an fcntl(2), a finalizer and the poller's locking on
// every write and close. A log file is written by one writer at a time
// and always closed by the store, so it needs none of them: of the
// ~85,000 logs a drain of 100,000 children reopens beyond the kept-file
// budget, each pays open(2), write(2) and close(2) alone. It retries an
// interrupted open as os.OpenFile does and fails with the same
// *fs.PathError.
func openFile(name string, flag int, perm fs.FileMode) (File, error) {
	fd, err := openAt(unix.AT_FDCWD, name, name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &fdFile{fd: fd, name: name}, nil
}

// openAt opens rel relative to the folder descriptor dirfd (unix.AT_FDCWD:
// the working folder) with openat(2), close-on-exec, retrying an
// interrupted call; its error is an *fs.PathError naming name.
func openAt(dirfd int, rel, name string, flag int, perm fs.FileMode) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, rel, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		switch {
		case err == nil:
			return fd, nil
		case err != syscall.EINTR:
			return -1, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
}

// fdFile is an open file as a bare blocking descriptor. Its errors are
// *fs.PathError as os.File's are; after Close every call fails with
// os.ErrClosed instead of reaching a descriptor the process may have
// reused. It is not safe for concurrent use.
type fdFile struct {
	fd   int // -1 once closed
	name string
}

func (f *fdFile) fail(op string, err error) error {
	return &fs.PathError{Op: op, Path: f.name, Err: err}
}

// Read reads up to len(p) bytes; io.EOF at the end of the file.
func (f *fdFile) Read(p []byte) (int, error) {
	if f.fd < 0 {
		return 0, f.fail("read", os.ErrClosed)
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Read(f.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, f.fail("read", err)
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Write writes all of p, as os.File's Write does, or fails.
func (f *fdFile) Write(p []byte) (int, error) {
	if f.fd < 0 {
		return 0, f.fail("write", os.ErrClosed)
	}
	written := 0
	for written < len(p) {
		n, err := syscall.Write(f.fd, p[written:])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return written, f.fail("write", err)
		case n == 0:
			return written, f.fail("write", io.ErrShortWrite)
		}
		written += n
	}
	return written, nil
}

// Sync makes the written data durable (fdatasync where the platform has
// it).
func (f *fdFile) Sync() error {
	if f.fd < 0 {
		return f.fail("sync", os.ErrClosed)
	}
	for {
		err := syncFD(f.fd)
		if err != syscall.EINTR {
			if err != nil {
				return f.fail(syncOp, err)
			}
			return nil
		}
	}
}

// Truncate changes the file's size.
func (f *fdFile) Truncate(size int64) error {
	if f.fd < 0 {
		return f.fail("truncate", os.ErrClosed)
	}
	for {
		err := syscall.Ftruncate(f.fd, size)
		if err != syscall.EINTR {
			if err != nil {
				return f.fail("truncate", err)
			}
			return nil
		}
	}
}

// Stat is os.File's Stat, through a duplicate of the descriptor (the
// store never calls it on a hot path).
func (f *fdFile) Stat() (fs.FileInfo, error) {
	if f.fd < 0 {
		return nil, f.fail("stat", os.ErrClosed)
	}
	dup, err := syscall.Dup(f.fd)
	if err != nil {
		return nil, f.fail("stat", err)
	}
	file := os.NewFile(uintptr(dup), f.name)
	defer file.Close()
	return file.Stat()
}

// Close closes the descriptor once; later calls fail with os.ErrClosed.
// As os.File's Close, it does not retry an interrupted close(2): the
// descriptor is gone either way on Linux.
func (f *fdFile) Close() error {
	if f.fd < 0 {
		return f.fail("close", os.ErrClosed)
	}
	err := syscall.Close(f.fd)
	f.fd = -1
	if err != nil {
		return f.fail("close", err)
	}
	return nil
}

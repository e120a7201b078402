//go:build unix

package sessionfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestOSFSOpenFileIsOSOpenFile: the poller-free open fails as os.OpenFile
// does (the same *fs.PathError, errors.Is with fs.ErrExist and
// fs.ErrNotExist), creates with the permission bits asked for, appends,
// and leaves the descriptor blocking and close-on-exec.
func TestOSFSOpenFileIsOSOpenFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "log")
	f, err := OSFS{}.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(t, err)
	_, err = f.Write([]byte("one\n"))
	require.NoError(t, err)
	fd := f.(*fdFile).fd
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	require.NoError(t, err)
	require.Zero(t, flags&unix.O_NONBLOCK, "the descriptor is blocking")
	fdFlags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	require.NoError(t, err)
	require.NotZero(t, fdFlags&unix.FD_CLOEXEC, "the descriptor is close-on-exec")
	require.NoError(t, f.Close())
	info, err := os.Stat(name)
	require.NoError(t, err)
	require.Equal(t, fs.FileMode(0o600), info.Mode().Perm())

	again, err := OSFS{}.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = again.Write([]byte("two\n"))
	require.NoError(t, err)
	require.NoError(t, again.Close())
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Equal(t, "one\ntwo\n", string(data))

	_, err = OSFS{}.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	_, want := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	require.ErrorIs(t, err, fs.ErrExist)
	require.Equal(t, want, err)
	var pathErr *fs.PathError
	require.True(t, errors.As(err, &pathErr))
	require.Equal(t, syscall.EEXIST, pathErr.Err)

	missing := filepath.Join(dir, "absent", "log")
	_, err = OSFS{}.OpenFile(missing, os.O_RDONLY, 0)
	_, want = os.OpenFile(missing, os.O_RDONLY, 0)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.Equal(t, want, err)
}

// A log file is a bare descriptor that behaves as an *os.File where the
// store uses one: reads end with io.EOF, Truncate and Stat see the file,
// Sync succeeds, and after Close every call fails with os.ErrClosed
// instead of reaching a descriptor the process may have reused.
func TestALogFileBehavesAsAnOSFileAndRefusesUseAfterClose(t *testing.T) {
	name := filepath.Join(t.TempDir(), "log")
	f, err := OSFS{}.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(t, err)
	n, err := f.Write([]byte("one\ntwo\n"))
	require.NoError(t, err)
	require.Equal(t, 8, n)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Truncate(4))
	info, err := f.Stat()
	require.NoError(t, err)
	require.Equal(t, int64(4), info.Size())
	require.Equal(t, "log", info.Name())
	require.NoError(t, f.Close())

	r, err := OSFS{}.OpenFile(name, os.O_RDONLY, 0)
	require.NoError(t, err)
	data, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, "one\n", string(data))
	n, err = r.Read(make([]byte, 4))
	require.Equal(t, 0, n)
	require.ErrorIs(t, err, io.EOF)
	require.NoError(t, r.Close())

	for op, call := range map[string]func() error{
		"read":     func() error { _, err := r.Read(make([]byte, 1)); return err },
		"write":    func() error { _, err := r.Write([]byte("x")); return err },
		"sync":     r.Sync,
		"truncate": func() error { return r.Truncate(0) },
		"stat":     func() error { _, err := r.Stat(); return err },
		"close":    r.Close,
	} {
		err := call()
		require.ErrorIs(t, err, os.ErrClosed, op)
		var pathErr *fs.PathError
		require.True(t, errors.As(err, &pathErr), op)
		require.Equal(t, name, pathErr.Path, op)
	}
	data, err = os.ReadFile(name)
	require.NoError(t, err)
	require.Equal(t, "one\n", string(data), "nothing written after close")
}

package faultfs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Each fault hits exactly the write or sync it names, and the file system
// behaves as the real one otherwise.
func TestFaultsHitTheWritesAndSyncsTheyName(t *testing.T) {
	fsys := New(nil)
	f, err := fsys.OpenFile(filepath.Join(t.TempDir(), "log"), os.O_CREATE|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	defer f.Close()

	fsys.FailSync(2, nil)
	require.NoError(t, f.Sync(), "the first sync passes")
	require.ErrorIs(t, f.Sync(), syscall.EIO, "the second fails")
	require.NoError(t, f.Sync(), "the third passes")
	require.Equal(t, 3, fsys.Syncs())

	fsys.ShortWriteThenENOSPC()
	n, err := f.Write([]byte("abcd"))
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Equal(t, 2, n, "half the bytes were written")

	fsys.SetFull(true)
	n, err = f.Write([]byte("x"))
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Zero(t, n, "a full disk writes nothing")
	fsys.SetFull(false)
	n, err = f.Write([]byte("y"))
	require.NoError(t, err)
	require.Equal(t, 1, n)
}

package session

import (
	"context"
	"io/fs"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
)

// lookupFS counts the directory reads and stats of the store.
type lookupFS struct {
	sessionfs.FS
	readDirs, stats atomic.Int64
}

func (c *lookupFS) ReadDir(name string) ([]fs.DirEntry, error) {
	c.readDirs.Add(1)
	return c.FS.ReadDir(name)
}

func (c *lookupFS) Stat(name string) (fs.FileInfo, error) {
	c.stats.Add(1)
	return c.FS.Stat(name)
}

// Creating a session costs no scan of the root's project folders: after
// the store's one root check, a Create of a new id reads no directory and
// stats nothing, however many sessions and projects the root holds. An id
// whose folder exists anywhere is still looked up, and refused.
func TestCreateDoesNotRescanTheRoot(t *testing.T) {
	ctx := context.Background()
	fsys := &lookupFS{FS: sessionfs.OSFS{}}
	s := openStore(t, WithFS(fsys))
	for i, cwd := range []string{"/a", "/b", "/c"} {
		require.NoError(t, s.Create(ctx, Header{ID: "seed-" + cwd[1:], CreatedAt: int64(i), Cwd: cwd}, nil))
	}

	fresh, err := OpenJSONL(s.Root(), WithFS(fsys))
	require.NoError(t, err)
	defer fresh.Close()
	_, err = fresh.List(ctx) // the root check runs once, here
	require.NoError(t, err)
	readDirs, stats := fsys.readDirs.Load(), fsys.stats.Load()
	for i := range 20 {
		require.NoError(t, fresh.Create(ctx, Header{ID: "new-" + formatInt(int64(i)), CreatedAt: 1, Cwd: "/a"}, nil))
	}
	require.Equal(t, readDirs, fsys.readDirs.Load(), "no directory is read per create")
	require.Equal(t, stats, fsys.stats.Load(), "nothing is statted per create")

	err = fresh.Create(ctx, Header{ID: "seed-b", CreatedAt: 1, Cwd: "/a"}, nil)
	require.ErrorIs(t, err, ErrExists, "an id stored under another project is refused")
}

//go:build unix

package sessionfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A kept folder opens and unlinks the files below it, named by their
// whole path, with the errors a path open gives (naming the whole path),
// and refuses a path that does not lie below it.
func TestAKeptFolderOpensAndUnlinksTheFilesBelowIt(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "project")
	require.NoError(t, os.MkdirAll(filepath.Join(project, "s1"), 0o700))
	d, err := OSFS{}.OpenDir(project)
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()

	name := filepath.Join(project, "s1", "session.jsonl")
	f, err := d.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(t, err)
	_, err = f.Write([]byte("one\n"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	again, err := d.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = again.Write([]byte("two\n"))
	require.NoError(t, err)
	require.NoError(t, again.Close())
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Equal(t, "one\ntwo\n", string(data))

	missing := filepath.Join(project, "s2", "session.jsonl")
	_, err = d.OpenFile(missing, os.O_WRONLY, 0)
	_, want := os.OpenFile(missing, os.O_WRONLY, 0)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.Equal(t, want, err)

	require.NoError(t, d.Unlink(name))
	_, err = os.Stat(name)
	require.ErrorIs(t, err, fs.ErrNotExist)
	err = d.Unlink(name)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.ErrorContains(t, err, name)

	for _, outside := range []string{filepath.Join(root, "other", "f"), project + "x/f", project, project + "/"} {
		_, err = d.OpenFile(outside, os.O_RDONLY, 0)
		require.ErrorIs(t, err, errNotBelow, outside)
		require.ErrorIs(t, d.Unlink(outside), errNotBelow, outside)
	}
}

// NoSync's kept folders open files whose Sync does nothing, as its
// OpenFile does.
func TestNoSyncKeptFoldersOpenFilesThatDoNotSync(t *testing.T) {
	root := t.TempDir()
	d, err := NoSync{}.OpenDir(root)
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	f, err := d.OpenFile(filepath.Join(root, "log"), os.O_WRONLY|os.O_CREATE, 0o600)
	require.NoError(t, err)
	require.IsType(t, noSyncFile{}, f)
	require.NoError(t, f.Close())
}

package session

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/faultfs"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
)

// A log reopened for every append goes through its kept project folder.
// When that folder is replaced while the store is open (removed, and the
// same logs written again at the same path), appends reach the new folder
// by path, and so does the lease release: nothing is written to, or left
// behind in, the folder that went away.
func TestAReplacedProjectFolderIsReachedByPath(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, withKeptFiles(0))
	h := header("replaced")
	require.NoError(t, s.Create(ctx, h, nil))
	epoch, err := s.Acquire(ctx, h.ID)
	require.NoError(t, err)
	require.NoError(t, s.AppendFenced(ctx, h.ID, epoch, []Event{ev(0, "todo/write", `{"i":0}`)}))

	path := logPathOf(t, s, h)
	project := filepath.Dir(filepath.Dir(path))
	require.NotNil(t, s.dirs.dirs[project], "the project folder is kept after a reopen")
	copied := project + ".copy"
	require.NoError(t, os.CopyFS(copied, os.DirFS(project)))
	require.NoError(t, os.RemoveAll(project))
	require.NoError(t, os.Rename(copied, project))

	require.NoError(t, s.AppendFenced(ctx, h.ID, epoch, []Event{ev(1, "todo/write", `{"i":1}`)}))
	require.NoError(t, s.Release(ctx, h.ID, epoch))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, 3, strings.Count(string(data), "\n"), "the header and both events, in the new folder")
	_, err = os.Stat(filepath.Join(filepath.Dir(path), logpath.LeaseRecordName))
	require.ErrorIs(t, err, fs.ErrNotExist, "the lease record is gone from the new folder")

	log, err := s.Load(ctx, h.ID)
	require.NoError(t, err)
	require.Len(t, log.Events, 2)
}

// A store over a file system that keeps no folders (the fault-injecting
// one, say) opens and unlinks by path; closing the store closes the
// folders it kept.
func TestProjectFoldersAreKeptOnlyWhereTheFileSystemCan(t *testing.T) {
	require.Nil(t, newProjectDirs(faultfs.New(nil)).fs)
	ctx0 := context.Background()
	s := openStore(t, withKeptFiles(0))
	h := header("kept")
	require.NoError(t, s.Create(ctx0, h, nil))
	require.NoError(t, s.Append(ctx0, h.ID, []Event{ev(0, "todo/write", `{"i":0}`)}))
	require.Len(t, s.dirs.dirs, 1)
	require.NoError(t, s.Close())
	require.Empty(t, s.dirs.dirs)
	kept, err := s.dirs.use(logPathOf(t, s, h), func(d sessionfs.Dir) error { return nil })
	require.NoError(t, err)
	require.False(t, kept, "after Close every call goes by path")
}

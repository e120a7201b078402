package session_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// Check over a root: a healthy store and
// a missing root have no problems; a damaged one names each problem with
// its path, and nothing is written.
func TestCheckNamesEachProblemOfARootAndWritesNothing(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	got, err := session.Check(ctx, filepath.Join(root, "missing"))
	require.NoError(t, err)
	require.Empty(t, got, "a missing root holds no damage")
	_, err = os.Stat(filepath.Join(root, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist, "check creates nothing")

	store, err := session.OpenJSONL(root)
	require.NoError(t, err)
	require.NoError(t, store.Create(ctx, session.Header{ID: "a", CreatedAt: 1, Cwd: "/w"}, nil))
	require.NoError(t, store.Close())
	got, err = session.Check(ctx, root)
	require.NoError(t, err)
	require.Empty(t, got, "a healthy store")

	log, err := logpath.Path(root, "/w", "a")
	require.NoError(t, err)
	project := filepath.Dir(filepath.Dir(log))
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"turn/st`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.Mkdir(filepath.Join(project, "empty"), 0o700))
	tmp := filepath.Join(project, "a", "session.jsonl.0123456789ab.tmp")
	require.NoError(t, os.WriteFile(tmp, []byte("x"), 0o600))
	before, err := os.ReadFile(log)
	require.NoError(t, err)

	got, err = session.Check(ctx, root)
	require.NoError(t, err)
	require.Len(t, got, 3)
	byPath := map[string]session.Damage{}
	for _, d := range got {
		byPath[d.Path] = d
		require.Contains(t, d.Msg, d.Path, "the message names the path")
	}
	require.Equal(t, "damaged-log", byPath[log].Kind)
	require.Equal(t, 2, byPath[log].Line, "the torn line is the file's second")
	require.Equal(t, int64(-1), byPath[log].FrameAt)
	require.Equal(t, "empty-folder", byPath[filepath.Join(project, "empty")].Kind)
	require.Equal(t, "temp-file", byPath[tmp].Kind)
	after, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Equal(t, before, after, "check writes nothing")
}

// Check honours a done context.
func TestCheckHonoursACancelledContext(t *testing.T) {
	root := t.TempDir()
	store, err := session.OpenJSONL(root)
	require.NoError(t, err)
	require.NoError(t, store.Create(context.Background(), session.Header{ID: "a", CreatedAt: 1}, nil))
	require.NoError(t, store.Close())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = session.Check(ctx, root)
	require.ErrorIs(t, err, context.Canceled)
}

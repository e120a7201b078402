package dsh

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/stretchr/testify/require"
)

// What a first embedding tripped on: each case is a call that answered
// something other than what the root package's doc promises.

// Once Close began every call answers the closed error, Drain included
// (it returned nil on a closed runtime).
func TestDrainOnAClosedRuntimeIsClosed(t *testing.T) {
	rt, err := Open(Options{Dir: t.TempDir()})
	require.NoError(t, err)
	p, err := rt.StartAgent(bg, "parent")
	require.NoError(t, err)
	_, err = rt.Spawn(bg, p, "worker", event.Text("sleep 1h"))
	require.NoError(t, err)
	require.NoError(t, rt.Close())
	require.ErrorIs(t, rt.Drain(bg, p), fault.Closed)
	require.ErrorIs(t, rt.Drain(bg), fault.Closed)
}

// Options.Dir is created by Open, so that a folder that cannot be made
// fails Open, naming it, instead of the first StartAgent.
func TestOpenMakesTheStoreFolderOrFailsNamingIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b", "sessions")
	rt, err := Open(Options{Dir: dir})
	require.NoError(t, err)
	require.DirExists(t, dir)
	require.NoError(t, rt.Close())

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	for _, bad := range []string{file, filepath.Join(file, "sessions")} {
		rt, err := Open(Options{Dir: bad})
		require.Nil(t, rt, bad)
		require.ErrorIs(t, err, fault.PersistenceUnavailable, bad)
		require.Contains(t, err.Error(), bad)
	}
}

// A nil parent handle is refused with a code and a message saying what is
// missing (Spawn's error had no code; Send's named the child only).
func TestSpawnAndSendWithoutAParentHandleSaySo(t *testing.T) {
	rt := open(t, Options{Dir: t.TempDir()})
	_, err := rt.Spawn(bg, nil, "worker", event.Text("reply hi"))
	require.ErrorIs(t, err, fault.Unauthorized)
	require.Contains(t, err.Error(), "nil parent")
	_, err = rt.Send(bg, nil, "some-child", event.Text("reply hi"))
	require.ErrorIs(t, err, fault.Unauthorized)
	require.Contains(t, err.Error(), "nil parent")
}

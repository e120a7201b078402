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

// The codes the root methods' docs promise, each met the way a first
// program meets it: a mistyped id, a handle kept across a restart, an id
// started twice.
func TestTheCodesTheRootDocsPromise(t *testing.T) {
	dir := t.TempDir()
	rt, err := Open(Options{Dir: dir})
	require.NoError(t, err)
	p, err := rt.StartAgent(bg, "parent")
	require.NoError(t, err)
	child, err := rt.Spawn(bg, p, "worker", event.Text("reply hi"))
	require.NoError(t, err)

	_, err = rt.Send(bg, p, "no-such-child", event.Text("reply hi"))
	require.ErrorIs(t, err, fault.NotResumable, "a child id that names no child")
	_, err = rt.Children(bg, "no-such-parent")
	require.ErrorIs(t, err, fault.QuerySessionNotFound)
	_, err = rt.Prompt(bg, "no-such-agent", "hi")
	require.ErrorIs(t, err, fault.AgentNotFound)
	_, err = rt.StartAgent(bg, "parent")
	require.ErrorIs(t, err, fault.AgentExists, "a live id")
	_, err = rt.Spawn(bg, p, "", event.Text("reply hi"))
	require.ErrorIs(t, err, fault.DescriptorInvalid, "an empty label")
	require.NoError(t, rt.Shutdown(bg))

	rt = open(t, Options{Dir: dir})
	_, err = rt.StartAgent(bg, "parent")
	require.ErrorIs(t, err, fault.AgentStartFailed, "a stored id is ResumeAgent's")
	_, err = rt.ResumeAgent(bg, "no-such-agent")
	require.ErrorIs(t, err, fault.AgentStartFailed)
	_, err = rt.Prompt(bg, "parent", "hi")
	require.ErrorIs(t, err, fault.AgentNotFound, "a stored agent takes prompts once resumed")
	_, err = rt.Send(bg, p, child, event.Text("reply hi"))
	require.ErrorIs(t, err, fault.Unauthorized, "a handle from before the restart")
	_, err = rt.Spawn(bg, p, "worker", event.Text("reply hi"))
	require.ErrorIs(t, err, fault.Unauthorized, "a handle from before the restart")
	p, err = rt.ResumeAgent(bg, "parent")
	require.NoError(t, err)
	_, err = rt.ResumeAgent(bg, "parent")
	require.ErrorIs(t, err, fault.AgentExists)
	_, err = rt.Send(bg, p, child, event.Text("reply again"))
	require.NoError(t, err, "the resumed handle cold-resumes the child")
	_, err = rt.Prompt(bg, "parent", "reply hi")
	require.NoError(t, err, "a resumed agent takes prompts")
}

package dsh

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/session"
)

// logNames are the names of the session log files under root.
func logNames(t *testing.T, root string) []string {
	t.Helper()
	var names []string
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "session.jsonl") {
			names = append(names, d.Name())
		}
		return err
	}))
	return names
}

// Compression picks the encoding of a new store's logs; "" is Zstandard
// (the original's default) for a new store and keeps an existing store's.
func TestCompressionPicksTheEncodingOfTheLogs(t *testing.T) {
	for compression, want := range map[string]string{"": "session.jsonl.zstd", "none": "session.jsonl", "zstd": "session.jsonl.zstd"} {
		dir := t.TempDir()
		rt := open(t, Options{Dir: dir, Compression: compression})
		_, err := rt.StartAgent(bg, "p")
		require.NoError(t, err)
		require.NoError(t, rt.Close())
		require.Equal(t, []string{want}, logNames(t, dir), "compression %q", compression)
		again := open(t, Options{Dir: dir})
		_, err = again.ResumeAgent(bg, "p")
		require.NoError(t, err, "an existing store keeps its encoding when Compression is empty")
		_, err = again.StartAgent(bg, "q")
		require.NoError(t, err)
		require.NoError(t, again.Close())
		require.Equal(t, []string{want, want}, logNames(t, dir), "a new log of an existing store (compression %q)", compression)
	}
}

// DurableAdmission opens the JSONL store in its durable admission mode,
// NoSync runs it without fsync; a runtime on either runs a child.
func TestDurableAdmissionAndNoSyncConfigureTheJSONLStore(t *testing.T) {
	for _, opts := range []Options{{Dir: t.TempDir()}, {Dir: t.TempDir(), DurableAdmission: true}, {Dir: t.TempDir(), NoSync: true}} {
		rt := open(t, opts)
		_, durable := session.InboxOf(rt.actors.Sessions().Store())
		require.Equal(t, opts.DurableAdmission, durable, "%+v", opts)
		p, err := rt.StartAgent(bg, "p")
		require.NoError(t, err)
		child, err := rt.Spawn(bg, p, "w", event.Text("reply ok"))
		require.NoError(t, err)
		end, ok, err := rt.WaitChild(bg, child)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "ok", event.TextOf(end.LastAssistantMessage), "%+v", opts)
	}
}

// Naming the other encoding than an existing store's logs fails Open
// itself, with the store's message and the persistence code, so a server
// never starts on a store whose every read it would refuse.
func TestOpenRefusesTheOtherCompressionOfAnExistingStore(t *testing.T) {
	for have, other := range map[string]string{"none": "zstd", "zstd": "none"} {
		dir := t.TempDir()
		rt := open(t, Options{Dir: dir, Compression: have})
		_, err := rt.StartAgent(bg, "p")
		require.NoError(t, err)
		require.NoError(t, rt.Close())
		_, err = Open(Options{Dir: dir, Compression: other})
		require.ErrorIs(t, err, fault.QueryPersistenceFailed, "%s store opened as %s", have, other)
		require.ErrorContains(t, err, `but this backend is configured for compression "`+other+`"; use a separate root or select the matching compression mode`)
		again := open(t, Options{Dir: dir, Compression: have})
		_, err = again.ResumeAgent(bg, "p")
		require.NoError(t, err, "the refused Open left the store as it was")
		require.NoError(t, again.Close())
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// check exits 0 for a healthy store and 1 naming each problem: a log
// whose header cannot be read (which list silently skips), a torn tail
// with its line, a leftover temporary file and an empty session folder.
func TestCheckCommand(t *testing.T) {
	root := testStore(t)
	code, out, stderr := run(t, "check", "--store", root)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "no damage found")

	project := filepath.Join(root, "--work--")
	require.NoError(t, os.WriteFile(filepath.Join(project, "fork", "session.jsonl"), []byte("{oops\n"), 0o600))
	parent := filepath.Join(project, "parent", "session.jsonl")
	f, err := os.OpenFile(parent, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"turn/start","seq":0,`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	tmp := filepath.Join(project, "child-a", "session.jsonl.0123456789ab.tmp")
	require.NoError(t, os.WriteFile(tmp, []byte("x"), 0o600))
	empty := filepath.Join(project, "gone")
	require.NoError(t, os.Mkdir(empty, 0o700))

	code, out, _ = run(t, "check", "--store", root)
	require.Equal(t, 1, code)
	require.Contains(t, out, "unreadable-header "+filepath.Join(project, "fork", "session.jsonl")+": corrupt session log: header line is not valid JSON")
	require.Contains(t, out, "damaged-log "+parent+" line 1: ")
	require.Contains(t, out, "temp-file "+tmp+": ")
	require.Contains(t, out, "empty-folder "+empty+": ")
	require.Contains(t, out, "4 problems found")

	code, out, _ = run(t, "check", "--json", "--store", root)
	require.Equal(t, 1, code)
	var got []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got, 4)
	kinds := map[string]bool{}
	for _, d := range got {
		kinds[d["kind"].(string)] = true
		require.NotEmpty(t, d["path"])
		require.NotEmpty(t, d["message"])
	}
	require.Equal(t, map[string]bool{"unreadable-header": true, "damaged-log": true, "temp-file": true, "empty-folder": true}, kinds)
}

func TestCheckCommandRefusesAMissingStore(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nowhere")
	code, _, stderr := run(t, "check", "--store", missing)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `store "`+missing+`" does not exist`)
	_, err := os.Stat(missing)
	require.ErrorIs(t, err, os.ErrNotExist, "check creates nothing")
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/session"
)

// check exits 0 for a healthy store and 1 naming each problem: a log
// whose header cannot be read (which list silently skips), a torn tail
// with its line, a leftover temporary file and an empty session folder.
func TestCheckCommand(t *testing.T) {
	root := healthyStore(t)
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
	require.Contains(t, out, "damaged-log "+parent+" line 2: ", "the torn line is the file's second")
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

// check reports what list flags in a child's descriptor (a malformed one,
// a second own descriptor, a version this build does not read), counts
// one problem in the singular, and locates damage by the file's own line
// (the header is line 1).
func TestCheckReportsWhatListFlags(t *testing.T) {
	root := testStore(t)
	project := filepath.Join(root, "--work--")
	code, out, _ := run(t, "check", "--store", root)
	require.Equal(t, 1, code)
	require.Contains(t, out, "damaged-log "+filepath.Join(project, "child-a", "session.jsonl")+
		": subagent descriptor at seq 2 is malformed (persisted subagent descriptor provider must be a string); list shows child-a as corrupt\n")
	require.Contains(t, out, "store "+root+": 1 problem found\n")

	store, err := session.OpenJSONL(root)
	require.NoError(t, err)
	twice := childLog(`{"version":1,"provider":"spawn","label":"one"}`)
	twice = append(twice[:3], logEvent(3, "subagent/descriptor", `{"version":1,"provider":"spawn","label":"two"}`))
	require.NoError(t, store.Create(context.Background(), session.Header{ID: "child-c", ParentSession: "parent", CreatedAt: 5,
		Cwd: "/work", DelegationDepth: 1}, twice))
	require.NoError(t, store.Create(context.Background(), session.Header{ID: "child-d", ParentSession: "parent", CreatedAt: 6,
		Cwd: "/work", DelegationDepth: 1}, childLog(`{"version":2,"provider":"spawn","label":"later"}`)))
	require.NoError(t, store.Close())
	code, out, _ = run(t, "check", "--store", root)
	require.Equal(t, 1, code)
	require.Contains(t, out, "damaged-log "+filepath.Join(project, "child-c", "session.jsonl")+
		": subagent descriptors at seq 2 and seq 3; list shows child-c as corrupt\n")
	require.Contains(t, out, "damaged-log "+filepath.Join(project, "child-d", "session.jsonl")+
		": subagent descriptor at seq 2 has a version this build does not read")
	require.Contains(t, out, "list shows child-d as unsupported\n")
	require.Contains(t, out, "3 problems found\n")
}

// healthyStore is testStore with child-a's descriptor made valid: a store
// check finds no problem in.
func healthyStore(t *testing.T) string {
	t.Helper()
	root := testStore(t)
	path := filepath.Join(root, "--work--", "child-a", "session.jsonl")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	healed := strings.Replace(string(data), `"provider":7`, `"provider":"spawn"`, 1)
	require.NotEqual(t, string(data), healed)
	require.NoError(t, os.WriteFile(path, []byte(healed), 0o600))
	return root
}

// check reads a Postgres store session by session: what list flags in a
// child's descriptor is named by the session's id.
func TestCheckAPostgresStore(t *testing.T) {
	dsn := cluster.Database(t)
	code, _, stderr := run(t, "import", "--from", testStore(t), "--store", dsn)
	require.Equal(t, 0, code, stderr)
	code, out, stderr := run(t, "check", "--store", dsn)
	require.Equal(t, 1, code, stderr)
	require.Equal(t, "damaged-log child-a: subagent descriptor at seq 2 is malformed "+
		"(persisted subagent descriptor provider must be a string); list shows child-a as corrupt\n"+
		"store "+dsn+": 1 problem found\n", out)

	code, out, stderr = run(t, "check", "--json", "--store", dsn)
	require.Equal(t, 1, code, stderr)
	require.JSONEq(t, `[{"kind":"damaged-log","path":"child-a","message":"subagent descriptor at seq 2 is malformed `+
		`(persisted subagent descriptor provider must be a string); list shows child-a as corrupt"}]`, out)
}

// TestALogWithAForeignEnvelopeKeyIsRefused: an event line carrying a key
// besides the seven of an event envelope makes show fail with the query
// layer's persistence failure in the original's words, and check report
// the log; neither writes.
func TestALogWithAForeignEnvelopeKeyIsRefused(t *testing.T) {
	root := testStore(t)
	path := logPath(t, root, "child-b")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := bytes.SplitAfter(raw, []byte("\n"))
	lines[2] = bytes.Replace(lines[2], []byte(`,"surfaceOp"`), []byte(`,"note":"x","surfaceOp"`), 1)
	damaged := bytes.Join(lines, nil)
	require.NoError(t, os.WriteFile(path, damaged, 0o600))
	refusal := `stored session "child-b" failed validation: seed event at index 1 has an invalid event envelope (raw log: ` + path + ")"

	code, stdout, stderr := run(t, "show", "--store", root, "child-b")
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Equal(t, `dsh-actors show: SESSION_QUERY_PERSISTENCE_FAILED: failed to inspect session "child-b": `+refusal+"\n", stderr)
	code, stdout, _ = run(t, "check", "--store", root)
	require.Equal(t, 1, code)
	require.Contains(t, stdout, "damaged-log "+path+": "+refusal+"\n")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, damaged, after, "nothing was written")
}

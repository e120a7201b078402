package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// run dispatches args and returns the exit status, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := dispatch(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func logEvent(seq int64, typ, data string) session.Event {
	return session.Event{Type: typ, Seq: seq, Time: 1_783_352_137_161, Data: json.RawMessage(data)}
}

// childLog is the log the original's authorChild writes.
func childLog(descriptorData string) []session.Event {
	user := logEvent(1, "user/message",
		`{"content":[{"type":"text","text":"summarize the doc"}],"source":{"kind":"user"},"role":"user","id":"m1"}`)
	user.SurfaceOp = json.RawMessage(`"append"`)
	return []session.Event{
		logEvent(0, "turn/start", `{"turn":1}`),
		user,
		logEvent(2, "subagent/descriptor", descriptorData),
		logEvent(3, "turn/end", `{"turn":1,"reason":{"kind":"completed"}}`),
	}
}

// testStore writes a parent with two children (one of them corrupt) and
// an ordinary fork, and returns the store root.
func testStore(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	store, err := session.OpenJSONL(root)
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	ctx := context.Background()
	create := func(h session.Header, events []session.Event) {
		require.NoError(t, store.Create(ctx, h, events))
	}
	create(session.Header{ID: "parent", CreatedAt: 1, Cwd: "/work"}, nil)
	create(session.Header{ID: "child-b", ParentSession: "parent", CreatedAt: 3, Cwd: "/work", DelegationDepth: 1},
		childLog(`{"version":1,"provider":"spawn","label":"write the summary"}`))
	create(session.Header{ID: "child-a", ParentSession: "parent", CreatedAt: 2, Cwd: "/work", DelegationDepth: 1},
		childLog(`{"version":1,"provider":7,"label":"broken"}`))
	create(session.Header{ID: "fork", ParentSession: "parent", CreatedAt: 4, Cwd: "/work"}, nil)
	return root
}

func TestListPrintsTheRendering(t *testing.T) {
	root := testStore(t)
	want := "child-a [diagnostic: corrupt]\nchild-b [complete] \u2014 write the summary\n"
	for _, args := range [][]string{
		{"list", "--store", root, "parent"},
		{"list", "parent", "--store", root},
		{"list", "--store=" + root, "--", "parent"},
	} {
		code, stdout, stderr := run(t, args...)
		require.Equal(t, 0, code, stderr)
		require.Equal(t, want, stdout, fmt.Sprint(args))
		require.Empty(t, stderr)
	}
}

func TestListPrintsJSON(t *testing.T) {
	root := testStore(t)
	code, stdout, _ := run(t, "list", "parent", "--json", "--store", root)
	require.Equal(t, 0, code)
	require.JSONEq(t, `[{"kind":"diagnostic","id":"child-a","reason":"corrupt"},
		{"kind":"child","id":"child-b","label":"write the summary","status":"complete"}]`, stdout)

	code, stdout, _ = run(t, "list", "--json", "--store", root, "child-b")
	require.Equal(t, 0, code)
	require.Equal(t, "[]\n", stdout)
}

func TestListRendersAParentWithoutChildren(t *testing.T) {
	code, stdout, _ := run(t, "list", "--store", testStore(t), "fork")
	require.Equal(t, 0, code)
	require.Equal(t, "(no subagents)\n", stdout)
}

func TestListFailsNamingTheCode(t *testing.T) {
	code, stdout, stderr := run(t, "list", "--store", testStore(t), "nobody")
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Equal(t, "dsh-actors list: SESSION_QUERY_SESSION_NOT_FOUND: session \"nobody\" not found\n", stderr)
}

func TestListUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"list"},
		{"list", "a", "b"},
		{"list", "--bogus", "parent"},
		{"list", "--store"},
	} {
		code, stdout, stderr := run(t, args...)
		require.Equal(t, 2, code, fmt.Sprint(args))
		require.Empty(t, stdout)
		require.Contains(t, stderr, listUsage)
	}
}

func TestWrongArgumentCountsAreNamed(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list"}, "expected one PARENT_ID argument, got 0"},
		{[]string{"list", "a", "b"}, "expected one PARENT_ID argument, got 2"},
		{[]string{"show"}, "expected one ID argument, got 0"},
		{[]string{"show", "a", "b", "c"}, "expected one ID argument, got 3"},
		// An empty id is a usage error, as send's PARENT_ID and CHILD_ID
		// are, not a session the store could not find.
		{[]string{"list", ""}, "PARENT_ID must not be empty"},
		{[]string{"show", ""}, "ID must not be empty"},
	} {
		code, _, stderr := run(t, tc.args...)
		require.Equal(t, 2, code, fmt.Sprint(tc.args))
		require.Contains(t, stderr, tc.want)
	}
}

// list --json writes what JSON.stringify writes: <, >, & and U+2028/U+2029
// raw, byte for byte.
func TestListJSONIsWhatJSONStringifyWrites(t *testing.T) {
	root := t.TempDir()
	store, err := session.OpenJSONL(root)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, store.Create(ctx, session.Header{ID: "parent", CreatedAt: 1, Cwd: "/work"}, nil))
	require.NoError(t, store.Create(ctx,
		session.Header{ID: "c-html", ParentSession: "parent", CreatedAt: 2, Cwd: "/work", DelegationDepth: 1},
		childLog(`{"version":1,"provider":"spawn","label":"a<b & c>\u2028 \"q\" 中文"}`)))
	require.NoError(t, store.Close())

	code, stdout, stderr := run(t, "list", "--json", "--store", root, "parent")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, `[{"kind":"child","id":"c-html","label":"a<b & c>`+"\u2028"+` \"q\" 中文","status":"complete"}]`+"\n", stdout)
}

// An empty PARENT_ID names no session: list refuses it as a usage error
// before opening anything, with the derived index as without it. The
// index used to answer "(no subagents)", exit 0, while the logs answered
// SESSION_NOT_FOUND; then both answered SESSION_NOT_FOUND, exit 1, while
// send refused an empty PARENT_ID as a usage error.
func TestListOfAnEmptyParentIsAUsageErrorWithOrWithoutTheIndex(t *testing.T) {
	store := testStore(t)
	for _, args := range [][]string{{"list", "--store", store, ""}, {"list", "--no-index", "--store", store, ""},
		{"list", "--json", "--store", store, ""}} {
		code, stdout, stderr := run(t, args...)
		require.Equal(t, 2, code, "%q: %s", args, stdout)
		require.Empty(t, stdout, args)
		require.True(t, strings.HasPrefix(stderr, "dsh-actors list: PARENT_ID must not be empty\nusage: dsh-actors list"), "%q: %s", args, stderr)
	}
}

// The original (JavaScript strings) can store a child whose id holds a
// lone UTF-16 surrogate: its header says "child-e\ud800" and its folder
// child-e~D800. A Go string cannot keep that id (it reads as U+FFFD, which
// names the folder child-e~FFFD), so the child is left out of the listing
// instead of failing it: its siblings list, with and without the index,
// and check reports it, naming the id as the original writes it.
func TestALoneSurrogateIDBreaksNoListing(t *testing.T) {
	root := testStore(t)
	project := filepath.Join(root, "--work--")
	data, err := os.ReadFile(filepath.Join(project, "child-b", "session.jsonl"))
	require.NoError(t, err)
	lone := strings.Replace(string(data), `"id":"child-b"`, `"id":"child-e\ud800"`, 1)
	require.NotEqual(t, string(data), lone)
	path := filepath.Join(project, "child-e~D800", "session.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(lone), 0o600))

	rendered := "child-a [diagnostic: corrupt]\nchild-b [complete] \u2014 write the summary\n"
	asJSON := `[{"kind":"diagnostic","id":"child-a","reason":"corrupt"},` +
		`{"kind":"child","id":"child-b","label":"write the summary","status":"complete"}]` + "\n"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "--store", root, "parent"}, rendered},
		{[]string{"list", "--no-index", "--store", root, "parent"}, rendered},
		{[]string{"list", "--json", "--store", root, "parent"}, asJSON},
		{[]string{"list", "--json", "--no-index", "--store", root, "parent"}, asJSON},
	} {
		code, stdout, stderr := run(t, tc.args...)
		require.Equal(t, 0, code, "%q: %s", tc.args, stderr)
		require.Equal(t, tc.want, stdout, tc.args)
	}

	code, out, _ := run(t, "check", "--store", root)
	require.Equal(t, 1, code)
	require.Contains(t, out, "unreadable-header "+path+`: session header id "child-e\ud800" holds a lone UTF-16 surrogate, `+
		"which this build cannot represent; the session is neither listed nor read (raw log: "+path+")\n")
	require.Contains(t, out, "store "+root+": 2 problems found\n")
}

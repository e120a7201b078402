package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/dsh-actors/dsh-actors/internal/index"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/session"
)

func TestListAnswersAlikeWithAndWithoutTheIndex(t *testing.T) {
	root := testStore(t)
	code, indexed, stderr := run(t, "list", "--store", root, "--json", "parent")
	require.Zero(t, code, stderr)
	_, err := os.Stat(filepath.Join(root, index.FileName))
	require.NoError(t, err, "the indexed list keeps its index in the store root")
	code, unindexed, stderr := run(t, "list", "--no-index", "--store", root, "--json", "parent")
	require.Zero(t, code, stderr)
	require.Equal(t, unindexed, indexed)
}

func TestListRebuildsAGarbageIndex(t *testing.T) {
	root := testStore(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, index.FileName), []byte("SQLite format 3\x00garbage that is not ours"), 0o600))
	code, out, stderr := run(t, "list", "--store", root, "parent")
	require.Zero(t, code, "a corrupt index is rebuilt: %s", stderr)
	require.Contains(t, out, "write the summary")
}

func TestSearchPrintsHitsIndexedAndUnindexed(t *testing.T) {
	root := testStore(t)
	for _, extra := range [][]string{nil, {"--no-index"}} {
		args := append([]string{"search", "--store", root}, extra...)
		code, out, stderr := run(t, append(args, "summarize the")...)
		require.Zero(t, code, stderr)
		require.Equal(t, "child-a 1 summarize the doc\nchild-b 1 summarize the doc\n", out)
		code, out, stderr = run(t, append(args, "--json", `"summarize" OR`)...)
		require.Zero(t, code, stderr)
		require.Equal(t, "[]\n", out, "FTS syntax is literal text")
		code, out, stderr = run(t, append(args, "--json", "DOC")...)
		require.Zero(t, code, stderr)
		require.Equal(t, `[{"sessionId":"child-a","seq":1,"type":"user/message","snippet":"summarize the doc"},`+
			`{"sessionId":"child-b","seq":1,"type":"user/message","snippet":"summarize the doc"}]`+"\n", out)
		code, _, stderr = run(t, append(args, "   ")...)
		require.Equal(t, 1, code)
		require.Contains(t, stderr, "SESSION_QUERY_INVALID_QUERY")
	}
}

// TestAForeignIndexFileIsRefusedNamingIt: another application's SQLite
// file where the index lives fails list and search with an error naming
// it and --no-index, and --no-index reads the store all the same; serve
// names it in a warning and serves the logs without an index; the file is
// left as it was.
func TestAForeignIndexFileIsRefusedNamingIt(t *testing.T) {
	root := testStore(t)
	path := filepath.Join(root, index.FileName)
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	for _, stmt := range []string{`PRAGMA application_id = 1146308689`, `CREATE TABLE persisted_sessions(id TEXT)`} {
		_, err := db.Exec(stmt)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, args := range [][]string{{"list", "parent"}, {"search", "summarize"}} {
		code, _, stderr := run(t, append([]string{args[0], "--store", root}, args[1:]...)...)
		require.Equal(t, 1, code, args)
		require.Contains(t, stderr, `index: refusing "`+path+`": it is another application's SQLite file (application_id 0x44534851)`, args)
		require.Contains(t, stderr, "--no-index", args)
		code, out, stderr := run(t, append([]string{args[0], "--no-index", "--store", root}, args[1:]...)...)
		require.Zero(t, code, stderr)
		require.Contains(t, out, "summar", args)
	}
	var log bytes.Buffer
	stack, err := openServeStack(serveFlags{store: root, indexed: true}, warnLogger(&log), nil, nil)
	require.NoError(t, err, "serve serves the logs without the index")
	require.Contains(t, log.String(), `index: refusing \"`+path+`\"`, "serve names the refused file in its warning")
	require.NoError(t, stack.shutdown(&http.Server{}))
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after, "the refused file is left alone")
}

// TestAMixedEncodingRootFailsAlikeWithAndWithoutTheIndex: a root holding
// a plain and a Zstandard log is refused by list and search, indexed or
// not, with the original's message naming the stray log.
func TestAMixedEncodingRootFailsAlikeWithAndWithoutTheIndex(t *testing.T) {
	root := testStore(t)
	other := t.TempDir()
	zstd, err := session.OpenJSONL(other, session.WithCompression(session.CompressionZstd))
	require.NoError(t, err)
	require.NoError(t, zstd.Create(context.Background(), session.Header{ID: "packed", CreatedAt: 9, Cwd: "/work"}, nil))
	require.NoError(t, zstd.Close())
	from, err := logpath.Path(other, "/work", "packed")
	require.NoError(t, err)
	to, err := logpath.Path(root, "/work", "packed")
	require.NoError(t, err)
	require.NoError(t, os.Rename(filepath.Dir(from), filepath.Dir(to)))
	want := `session artifact "` + to + `.zstd" uses .jsonl.zstd, but this backend is configured for compression "none"; ` +
		`use a separate root or select the matching compression mode`
	for _, args := range [][]string{{"list", "parent"}, {"search", "summarize"}} {
		for _, extra := range [][]string{nil, {"--no-index"}} {
			code, _, stderr := run(t, append(append([]string{args[0], "--store", root}, extra...), args[1:]...)...)
			require.Equal(t, 1, code, "%v %v", args, extra)
			require.Contains(t, stderr, want, "%v %v", args, extra)
		}
	}
}

// A page window out of range is refused before any search, indexed or
// not: --limit 0 as the original refuses it, --offset -1 naming the offset.
func TestSearchRefusesAnOutOfRangeWindow(t *testing.T) {
	root := testStore(t)
	for _, extra := range [][]string{nil, {"--no-index"}} {
		code, stdout, stderr := run(t, append([]string{"search", "--store", root, "--limit", "0", "summary"}, extra...)...)
		require.Equal(t, 1, code, stdout)
		require.Equal(t, "dsh-actors search: SESSION_QUERY_INVALID_LIMIT: limit must be an integer between 1 and 100\n", stderr)
		code, stdout, stderr = run(t, append([]string{"search", "--store", root, "--offset", "-1", "summary"}, extra...)...)
		require.Equal(t, 1, code, stdout)
		require.Equal(t, "dsh-actors search: SESSION_QUERY_INVALID_LIMIT: offset must be a non-negative integer, got -1\n", stderr)
	}
}

// list and search say in their help where the derived index lives.
func TestListAndSearchHelpNameTheIndexFile(t *testing.T) {
	for _, command := range []string{"list", "search"} {
		code, stdout, _ := run(t, command, "--help")
		require.Zero(t, code)
		require.Contains(t, stdout, "<store>/"+index.FileName, command)
	}
}

// TestSearchFailsOnALogItCannotRead: a stored log that cannot be read — damaged
// before its last turn/end, or holding an event type this build does not
// know — fails search, indexed or not, as the original's search does:
// SESSION_QUERY_PERSISTENCE_FAILED "session-search persistence observation
// failed: <the store's words>", exit 1, nothing printed. A torn last line
// (normal after a crash) is no failure: its valid prefix is searched.
func TestSearchFailsOnALogItCannotRead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(raw []byte) []byte
		words  string // %s: the log's path
	}{
		{"damaged", func(raw []byte) []byte {
			lines := bytes.SplitAfter(raw, []byte("\n"))
			lines[1] = []byte("not json\n")
			return bytes.Join(lines, nil)
		}, "corrupt session log: unparsable committed event at line 1 (raw log: %s)"},
		{"unknown type", func(raw []byte) []byte {
			return append(raw, `{"type":"future/thing","seq":4,"time":1,"data":{}}`+"\n"...)
		}, `session "child-b" contains event type "future/thing" (seq 4) unknown to this harness and not marked ignorable; ` +
			"refusing to interpret the log — it was likely written by a newer harness (raw log: %s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := testStore(t)
			path := logPath(t, root, "child-b")
			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, tc.damage(raw), 0o600))
			want := "dsh-actors search: SESSION_QUERY_PERSISTENCE_FAILED: session-search persistence observation failed: " +
				fmt.Sprintf(tc.words, path) + "\n"
			for _, extra := range [][]string{nil, {"--no-index"}, nil} { // the second indexed search reads the index kept
				code, out, stderr := run(t, append(append([]string{"search", "--store", root}, extra...), "summarize")...)
				require.Equal(t, 1, code, extra)
				require.Empty(t, out, extra)
				require.Equal(t, want, stderr, extra)
			}
		})
	}
	t.Run("torn tail", func(t *testing.T) {
		root := testStore(t)
		path := logPath(t, root, "child-b")
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(raw, `{"type":"turn/start","seq":4,`...), 0o600))
		for _, extra := range [][]string{nil, {"--no-index"}} {
			code, out, stderr := run(t, append(append([]string{"search", "--store", root}, extra...), "summarize")...)
			require.Zero(t, code, stderr)
			require.Equal(t, "child-a 1 summarize the doc\nchild-b 1 summarize the doc\n", out, extra)
		}
	})
}

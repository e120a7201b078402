package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/index"
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

func TestListRefusesAForeignIndexFileClearly(t *testing.T) {
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

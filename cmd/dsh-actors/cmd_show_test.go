package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/session"
)

func TestShowPrintsTheHeaderThenOneLinePerEvent(t *testing.T) {
	code, stdout, stderr := run(t, "show", "child-b", "--store", testStore(t))
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "session child-b createdAt=1970-01-01T00:00:00.003Z parent=parent cwd=/work depth=1\n"+
		"    0  turn/start            turn 1\n"+
		"    1  user/message          \"summarize the doc\"\n"+
		"    2  subagent/descriptor   provider=spawn label=\"write the summary\"\n"+
		"    3  turn/end              turn 1 completed\n", stdout)
}

func TestShowNamesAMalformedDescriptor(t *testing.T) {
	code, stdout, _ := run(t, "show", "--store", testStore(t), "child-a")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "    2  subagent/descriptor   persisted subagent descriptor provider must be a string\n")
}

func TestShowIsReadOnlyOnATornLog(t *testing.T) {
	root := testStore(t)
	path, err := session.LogPath(root, "/work", "child-b")
	require.NoError(t, err)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"turn/st`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	code, stdout, _ := run(t, "show", "--store", root, "child-b")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "    3  turn/end")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after)
}

func TestShowFailsNamingTheCode(t *testing.T) {
	code, _, stderr := run(t, "show", "--store", testStore(t), "nobody")
	require.Equal(t, 1, code)
	require.Equal(t, "dsh-actors show: SESSION_QUERY_SESSION_NOT_FOUND: session \"nobody\" not found\n", stderr)
}

func TestShowUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"show"}, {"show", "a", "b"}, {"show", "--json", "a"}} {
		code, _, stderr := run(t, args...)
		require.Equal(t, 2, code)
		require.Contains(t, stderr, showUsage)
	}
}

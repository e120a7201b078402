package main

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/modelagent/modelagenttest"
	"github.com/stretchr/testify/require"
)

// send rebuilds a stored child from its descriptor's route: a model child
// calls its model (configured by the environment, as for run and serve;
// send names no model), a scripted child calls none, and without the
// model's key the model child is NOT_RESUMABLE naming its route instead
// of answering as the scripted agent.
func TestSendRebuildsTheChildOfItsDescriptorsRoute(t *testing.T) {
	srv := modelagenttest.NewServer(
		modelagenttest.CallTools(modelagenttest.Call{ID: "c1", Name: "subagent",
			Args: []string{`{"description": "kid", "prompt": "Say ready.", "run_in_background": true}`}}),
		modelagenttest.Say("done"), // the parent's answer and the child's first, in either order
		modelagenttest.Say("done"),
		modelagenttest.Say("AGAIN"),
	)
	defer srv.Close()
	t.Setenv("DEEPSEEK_API_KEY", "k")
	t.Setenv("DEEPSEEK_BASE_URL", srv.URL)
	store := t.TempDir()
	code, _, stderr := run(t, "run", "--model", "deepseek-v4-flash", "--store", store, "delegate")
	require.Equal(t, 0, code, stderr)
	require.Len(t, srv.Received(), 3)
	parentID, childID := onlyChild(t, store)

	code, stdout, stderr := run(t, "send", "--store", store, parentID, childID, "once more")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, childID+` completed: AGAIN\n$`, stdout)
	calls := srv.Received()
	require.Len(t, calls, 4, "the child called its model")
	require.Contains(t, string(calls[3].Body), `"model":"deepseek-v4-flash"`)
	require.Contains(t, string(calls[3].Body), `once more`)

	t.Setenv("DEEPSEEK_API_KEY", "")
	code, _, stderr = run(t, "send", "--store", store, parentID, childID, "reply echo")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "NOT_RESUMABLE")
	require.Contains(t, stderr, `"deepseek-official/deepseek-v4-flash"`)
	require.Len(t, srv.Received(), 4)

	t.Setenv("DEEPSEEK_API_KEY", "k")
	scripted := t.TempDir()
	code, stdout, stderr = run(t, "run", "--store", scripted, "spawn kid: reply hi")
	require.Equal(t, 0, code, stderr)
	_, _, rest := runOutput(t, stdout)
	require.Regexp(t, regexp.MustCompile(`^spawned kid [0-9a-f-]{36}\n`), rest)
	parentID, childID = onlyChild(t, scripted)
	code, stdout, stderr = run(t, "send", "--store", scripted, parentID, childID, "reply again")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, childID+` completed: again\n$`, stdout)
	require.Len(t, srv.Received(), 4, "a scripted child calls no model")
}

// onlyChild reads the store root's two session headers: a top-level
// agent and its one child.
func onlyChild(t *testing.T, root string) (parentID, childID string) {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(root, "*", "*", "session.jsonl.zstd"))
	require.NoError(t, err)
	require.Len(t, logs, 2)
	for _, path := range logs {
		line := bufio.NewScanner(strings.NewReader(logText(t, path)))
		require.True(t, line.Scan(), "header of %s", path)
		var header struct{ ID, ParentSession string }
		require.NoError(t, json.Unmarshal(line.Bytes(), &header))
		if header.ParentSession == "" {
			parentID = header.ID
		} else {
			childID = header.ID
		}
	}
	require.NotEmpty(t, parentID)
	require.NotEmpty(t, childID)
	return parentID, childID
}

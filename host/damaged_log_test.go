package host

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/stretchr/testify/require"
)

// damageLine replaces event line n (from 1, after the header) of the
// stored log of id with text that is not JSON, and returns the log's path.
func damageLine(t testing.TB, root, cwd, id string, n int) string {
	t.Helper()
	path, err := logpath.Path(root, cwd, id)
	require.NoError(t, err)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(string(raw), "\n")
	require.Greater(t, len(lines), n+1, "the log has line %d", n)
	lines[n] = `{"type":"user/message","seq":` // cut short: not JSON
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644))
	return path
}

// talkAndStore runs prompts on a new top-level agent id and releases it,
// leaving its log in the store.
func talkAndStore(t testing.TB, rt *dsh.Runtime, id string, prompts ...string) {
	t.Helper()
	started(t, rt, id)
	for _, prompt := range prompts {
		converse(t, rt, id, prompt)
	}
	require.NoError(t, rt.Release(context.Background(), id))
}

// TestSessionHistoryOfADamagedLogIsTyped: session.history of a log damaged
// in the middle answers session-log-corrupt naming the line and the damage
// (the file), with the page of what precedes it; never internal.
func TestSessionHistoryOfADamagedLogIsTyped(t *testing.T) {
	root := t.TempDir()
	rt, b := openRuntime(t, root)
	talkAndStore(t, rt, "hurt", "reply one", "reply two", "reply three")
	h := newTestHandler(t, b)
	whole := callRPC(t, h, "session.history", map[string]any{"sessionId": "hurt"})
	require.True(t, whole.Result.OK)
	var before struct {
		Events []any `json:"events"`
	}
	require.NoError(t, json.Unmarshal(whole.Result.Value, &before))
	line := 8
	path := damageLine(t, root, "", "hurt", line)

	r := callRPC(t, h, "session.history", map[string]any{"sessionId": "hurt"})
	require.False(t, r.Result.OK)
	require.Equal(t, codeSessionLogCorrupt, r.Result.Error.Code)
	damage := "corrupt session log: unparsable committed event at line 8 (raw log: " + path + ")"
	require.Equal(t, `session "hurt" log is damaged: `+damage, r.Result.Error.Message)
	details := r.Result.Error.Details
	require.Equal(t, "hurt", details["sessionId"])
	require.Equal(t, float64(line), details["line"])
	require.Equal(t, damage, details["damage"])
	require.Equal(t, false, details["hasMore"])
	events := details["events"].([]any)
	require.Len(t, events, line-1, "every event before the damaged line")
	require.Equal(t, before.Events[:line-1], events, "as session.history pages them")

	older := callRPC(t, h, "session.history", map[string]any{"sessionId": "hurt", "beforeSeq": 3, "maxMessages": 1})
	require.Equal(t, codeSessionLogCorrupt, older.Result.Error.Code)
	require.Len(t, older.Result.Error.Details["events"], 2, "older pages of the prefix page alike")
}

// TestSessionPromptToADamagedLogIsTyped: session.prompt to a stored log
// damaged in the middle (which no message can resume) answers
// session-log-corrupt naming the line and the damage; never internal.
func TestSessionPromptToADamagedLogIsTyped(t *testing.T) {
	root := t.TempDir()
	rt, b := openRuntime(t, root)
	talkAndStore(t, rt, "hurt", "reply one", "reply two")
	h := newTestHandler(t, b)
	path := damageLine(t, root, "", "hurt", 5)
	r := callRPC(t, h, "session.prompt", map[string]any{"sessionId": "hurt", "mode": "queue",
		"content": []any{map[string]any{"type": "text", "text": "reply three"}}})
	require.False(t, r.Result.OK)
	require.Equal(t, codeSessionLogCorrupt, r.Result.Error.Code)
	damage := "corrupt session log: unparsable committed event at line 5 (raw log: " + path + ")"
	require.Equal(t, `session "hurt" log is damaged, so no message can resume it: `+damage, r.Result.Error.Message)
	require.Equal(t, map[string]any{"sessionId": "hurt", "line": float64(5), "damage": damage, "events": []any{}, "hasMore": false},
		r.Result.Error.Details)
}

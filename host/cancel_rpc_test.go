package host

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/stretchr/testify/require"
)

// TestSessionCancelStopsTheRunningTurn: session.cancel aborts a live
// top-level agent's running turn (cause user) and discards what waits;
// session.list then says how the last turn ended. A stored session is
// accepted without waking it; an unknown one is session-not-found.
func TestSessionCancelStopsTheRunningTurn(t *testing.T) {
	ctx := context.Background()
	rt, b := openRuntime(t, t.TempDir())
	h := newTestHandler(t, b)
	started(t, rt, "top")
	_, err := rt.PromptSession(ctx, "top", event.Text("sleep 1m"), userSource)
	require.NoError(t, err)
	_, err = rt.PromptSession(ctx, "top", event.Text("reply never"), userSource)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return lastTurnStarted(history(t, rt, "top")) }, time.Minute, time.Millisecond,
		"waiting for the sleeping turn to start")

	r := callRPC(t, h, "session.cancel", map[string]any{"sessionId": "top"})
	require.True(t, r.Result.OK, "%+v", r.Result.Error)
	require.JSONEq(t, `{"accepted":true}`, string(r.Result.Value))
	waitIdle(t, rt, "top", "sleep 1m")
	for _, e := range history(t, rt, "top") {
		require.NotContains(t, string(e.Data), "never", "the queued message was discarded")
	}

	var list struct {
		Items []map[string]any `json:"items"`
	}
	r = callRPC(t, h, "session.list", map[string]any{})
	require.True(t, r.Result.OK)
	require.NoError(t, json.Unmarshal(r.Result.Value, &list))
	require.Len(t, list.Items, 1)
	require.Equal(t, true, list.Items[0]["live"])
	require.Equal(t, map[string]any{"kind": "aborted"}, list.Items[0]["lastTurn"])

	require.NoError(t, rt.Release(ctx, "top"))
	r = callRPC(t, h, "session.cancel", map[string]any{"sessionId": "top"})
	require.True(t, r.Result.OK, "a stored session has nothing to stop")
	require.False(t, isLive(rt, "top"), "cancel wakes nothing")
	requireError(t, callRPC(t, h, "session.cancel", map[string]any{"sessionId": "nobody"}),
		codeSessionNotFound, `session "nobody" not found`, map[string]any{"sessionId": "nobody"})
}

// lastTurnStarted reports whether events end inside a turn.
func lastTurnStarted(events []dsh.Event) bool {
	for i := len(events) - 1; i >= 0; i-- {
		switch events[i].Type {
		case vocab.TypeTurnStart:
			return true
		case vocab.TypeTurnEnd:
			return false
		}
	}
	return false
}

package host

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// TestSessionCancelStopsTheRunningTurn: session.cancel aborts a live
// top-level agent's running turn (cause user) and, as the original's
// cancel with keepInbox, keeps what waits: the queued prompt runs next, in
// order, and no agent/inbox/discard is logged. session.list then says how
// the last turn ended. A session no agent is attached to here, stored or
// unknown, is the original's session-not-found "(not attached)", and
// nothing is woken.
func TestSessionCancelStopsTheRunningTurn(t *testing.T) {
	ctx := context.Background()
	rt, b := openRuntime(t, t.TempDir())
	h := newTestHandler(t, b)
	started(t, rt, "top")
	_, err := rt.PromptSession(ctx, "top", event.Text("sleep 1m"), userSource)
	require.NoError(t, err)
	_, err = rt.PromptSession(ctx, "top", event.Text("reply kept"), userSource)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return lastTurnStarted(history(t, rt, "top")) }, time.Minute, time.Millisecond,
		"waiting for the sleeping turn to start")

	r := callRPC(t, h, "session.cancel", map[string]any{"sessionId": "top"})
	require.True(t, r.Result.OK, "%+v", r.Result.Error)
	require.JSONEq(t, `{"accepted":true}`, string(r.Result.Value))
	waitIdle(t, rt, "top", "reply kept")
	var ends []string
	for _, e := range history(t, rt, "top") {
		require.NotEqual(t, "agent/inbox/discard", e.Type, "the queued prompt was discarded")
		if e.Type == "turn/end" {
			ends = append(ends, string(e.Data))
		}
	}
	require.Len(t, ends, 2, "the aborted turn, then the kept prompt's")
	require.Contains(t, ends[0], `"aborted"`)
	top, ok := rt.Agent("top")
	require.True(t, ok, "top is live")
	reply, err := top.LastReply()
	require.NoError(t, err)
	require.Equal(t, "kept", reply, "the queued prompt ran after the aborted turn")

	_, err = rt.PromptSession(ctx, "top", event.Text("sleep 1m"), userSource)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return lastTurnStarted(history(t, rt, "top")) }, time.Minute, time.Millisecond,
		"waiting for the second sleeping turn to start")
	r = callRPC(t, h, "session.cancel", map[string]any{"sessionId": "top"})
	require.True(t, r.Result.OK, "%+v", r.Result.Error)
	waitIdle(t, rt, "top", "sleep 1m")

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
	requireError(t, callRPC(t, h, "session.cancel", map[string]any{"sessionId": "top"}),
		codeSessionNotFound, `session "top" not found (not attached)`, map[string]any{"sessionId": "top"})
	require.False(t, isLive(rt, "top"), "cancel wakes nothing")
	requireError(t, callRPC(t, h, "session.cancel", map[string]any{"sessionId": "nobody"}),
		codeSessionNotFound, `session "nobody" not found (not attached)`, map[string]any{"sessionId": "nobody"})
}

// session.cancel of a session another process runs (it holds the lease)
// cannot stop its turn from here: it is agent-busy, running in another
// process, as session.prompt and session.create answer it, not
// session-not-found, which would tell the page the session is gone. A
// subagent session leased elsewhere is owned by subagent routing, as a
// live one here. The lease is only probed: nothing is resumed or logged,
// and the other process still holds it.
func TestSessionCancelOfASessionLeasedElsewhereIsAgentBusy(t *testing.T) {
	root := t.TempDir()
	elsewhere, before := storedAndLeasedElsewhere(t, root)
	planted(t, root, "", func(store *session.JSONL) {
		plant(t, store, session.Header{ID: "kid", ParentSession: "top", Origin: "subagent"})
	})
	leaseElsewhere(t, root, "kid")
	rt, b := openRuntime(t, root)
	h := newTestHandler(t, b)
	requireBusyElsewhere(t, rawCall(t, h, "session.cancel", `{"sessionId":"top"}`), rt, elsewhere, before)
	third, err := session.OpenJSONL(root)
	require.NoError(t, err)
	_, err = third.Acquire(context.Background(), "top")
	require.ErrorIs(t, err, fault.LeaseHeld, "the other process still holds the lease")
	require.NoError(t, third.Close())
	requireError(t, callRPC(t, h, "session.cancel", map[string]any{"sessionId": "kid"}),
		codeAgentBusy, `session "kid" is owned by subagent routing`, map[string]any{"reason": "use subagent delivery for this child session"})
	require.False(t, isLive(rt, "kid"))
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

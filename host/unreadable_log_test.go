package host

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// plantUnknownTyped stores a top-level session "odd" and a continuable
// child "mom-odd" of parentID, each holding an event of a type this build
// does not know, not marked ignorable. It returns the logs' refusals (the
// store's words), by id.
func plantUnknownTyped(t *testing.T, s *runtimeStack, parentID string) map[string]string {
	t.Helper()
	d, err := descriptor.Snapshot(descriptor.Data{Provider: "spawn", Label: "odd"})
	require.NoError(t, err)
	data, err := json.Marshal(d)
	require.NoError(t, err)
	future := session.Event{Type: "future/thing", Data: json.RawMessage(`{"x":1}`)}
	s.plant(t, func(store *session.JSONL) {
		plant(t, store, session.Header{ID: "odd"}, future)
		plant(t, store, session.Header{ID: parentID + "-odd", ParentSession: parentID, Origin: "subagent", DelegationDepth: 1},
			session.Event{Type: vocab.TypeSubagentDescriptor, Data: data}, future)
	})
	refusals := map[string]string{}
	for id, seq := range map[string]int{"odd": 0, parentID + "-odd": 1} {
		path, err := logpath.Path(s.root, "", id)
		require.NoError(t, err)
		refusals[id] = fmt.Sprintf(`session "%s" contains event type "future/thing" (seq %d) unknown to this harness and not marked ignorable; `+
			"refusing to interpret the log — it was likely written by a newer harness (raw log: %s)", id, seq, path)
	}
	return refusals
}

// TestEveryRPCNamesALogItCannotInterpret: a stored log holding an event
// type this build does not know (not ignorable) is not damaged, so it is
// no session-log-corrupt; every session RPC that must read it answers, as
// the original does, internal with a message naming the session and the
// store's refusal (never the bare "… failed"). The catalog lists such a
// child unavailable, and subagent.history says so.
func TestEveryRPCNamesALogItCannotInterpret(t *testing.T) {
	s := newRuntimeStackOn(t, t.TempDir(), false, "none")
	talkAndStore(t, s.rt, "mom", "reply hello")
	refusals := plantUnknownTyped(t, s, "mom")
	odd := refusals["odd"]
	text := []any{map[string]any{"type": "text", "text": "reply x"}}
	for _, tc := range []struct {
		method  string
		payload map[string]any
		message string
	}{
		{"session.history", map[string]any{"sessionId": "odd"}, `history unavailable for session "odd": ` + odd},
		{"session.history", map[string]any{"sessionId": "odd", "beforeSeq": 1}, `history unavailable for session "odd": ` + odd},
		{"session.prompt", map[string]any{"sessionId": "odd", "mode": "queue", "content": text}, `resume failed for session "odd": ` + odd},
		{"session.create", map[string]any{"sessionId": "odd"}, `failed to create session "odd": ` + odd},
	} {
		r := callRPC(t, s.recorder, tc.method, tc.payload)
		require.False(t, r.Result.OK, tc.method)
		require.Equal(t, codeInternal, r.Result.Error.Code, tc.method)
		require.Equal(t, tc.message, r.Result.Error.Message, tc.method)
		require.Empty(t, r.Result.Error.Details, tc.method)
	}

	list := callRPC(t, s.recorder, "subagent.list", map[string]any{"parentSessionId": "mom"})
	require.JSONEq(t, `{"entries":[{"kind":"diagnostic","id":"mom-odd","reason":"unavailable"}],"parentAvailable":false}`,
		string(list.Result.Value))
	history := callRPC(t, s.recorder, "subagent.history", map[string]any{"parentSessionId": "mom", "childSessionId": "mom-odd"})
	require.False(t, history.Result.OK)
	require.Equal(t, codeSubagentCatalogDiagnostic, history.Result.Error.Code)
	require.Equal(t, `subagent "mom-odd" is unavailable`, history.Result.Error.Message)
	sessions := callRPC(t, s.recorder, "session.list", map[string]any{})
	require.True(t, sessions.Result.OK)
	require.Contains(t, string(sessions.Result.Value), `{"sessionId":"odd",`, "listed, without a title")
}

// TestSessionSearchNamesALogItCannotRead: session.search over a store
// holding a log it cannot read fails as the original's does, internal
// "session search failed: session-search persistence observation failed:
// <the store's words>", indexed or not.
func TestSessionSearchNamesALogItCannotRead(t *testing.T) {
	for _, indexed := range []bool{true, false} {
		s := newRuntimeStackOn(t, t.TempDir(), indexed, "none")
		talkAndStore(t, s.rt, "mom", "reply hello")
		refusals := plantUnknownTyped(t, s, "mom")
		r := callRPC(t, s.recorder, "session.search", map[string]any{"query": "hello"})
		require.False(t, r.Result.OK, "indexed %v", indexed)
		require.Equal(t, codeInternal, r.Result.Error.Code)
		require.Equal(t, "session search failed: session-search persistence observation failed: "+refusals["mom-odd"],
			r.Result.Error.Message, "indexed %v: the first in id order", indexed)
		require.Empty(t, r.Result.Error.Details)
	}
}

package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/durable"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// catalogFixture: parent p1 with a running worker, an inactive reviewer and
// a corrupt candidate; worker's transcript holds one user message.
func catalogFixture() *fakeBackend {
	b := newFakeBackend()
	b.catalogs["p1"] = []catalogEntry{
		{Kind: kindChild, ID: "worker", Label: "scan files", Running: true},
		{Kind: kindChild, ID: "reviewer", Label: "review"},
		{Kind: kindDiagnostic, ID: "broken", Reason: "corrupt"},
		{Kind: kindDiagnostic, ID: "future", Reason: "unsupported"},
	}
	b.transcripts["worker"] = transcript{ParentSessionID: "p1", Events: []session.Event{message(0, "user/message", "scan the project")}}
	b.transcripts["reviewer"] = transcript{ParentSessionID: "p1"}
	return b
}

func TestSubagentListReturnsTheCompleteCatalogAndParentAvailability(t *testing.T) {
	b := catalogFixture()
	h := newTestHandler(t, b)

	r := callRPC(t, h, "subagent.list", map[string]any{"parentSessionId": "p1"})
	require.Equal(t, "r-subagent.list", r.RPCID)
	require.JSONEq(t, `{"entries":[
		{"kind":"child","id":"worker","label":"scan files","activity":"running"},
		{"kind":"child","id":"reviewer","label":"review","activity":"inactive"},
		{"kind":"diagnostic","id":"broken","reason":"corrupt"},
		{"kind":"diagnostic","id":"future","reason":"unsupported"}],
		"parentAvailable":false}`, string(r.Result.Value))

	b.live["p1"] = true
	r = callRPC(t, h, "subagent.list", map[string]any{"parentSessionId": "p1"})
	require.Contains(t, string(r.Result.Value), `"parentAvailable":true`)
	require.Equal(t, []string{"ListChildren p1", "LiveAgent p1", "ListChildren p1", "LiveAgent p1"}, b.callLog())
}

// TestSubagentListRowsAreTheCatalogProjection pins the exact bytes of the
// rows: {kind, id, label, activity} with no mode and a label even
// when it is empty; diagnostics {kind, id, reason}.
func TestSubagentListRowsAreTheCatalogProjection(t *testing.T) {
	b := newFakeBackend()
	b.catalogs["p1"] = []catalogEntry{
		{Kind: kindChild, ID: "a-child", Label: ""},
		{Kind: kindChild, ID: "b-child", Label: "scan", Running: true},
		{Kind: kindDiagnostic, ID: "c-child", Reason: "corrupt"},
	}
	r := callRPC(t, newTestHandler(t, b), "subagent.list", map[string]any{"parentSessionId": "p1"})
	require.Equal(t, `{"entries":[`+
		`{"kind":"child","id":"a-child","label":"","activity":"inactive"},`+
		`{"kind":"child","id":"b-child","label":"scan","activity":"running"},`+
		`{"kind":"diagnostic","id":"c-child","reason":"corrupt"}],"parentAvailable":false}`, string(r.Result.Value))
}

func TestSubagentListErrorsHideBackendDetails(t *testing.T) {
	b := catalogFixture()
	h := newTestHandler(t, b)

	r := callRPC(t, h, "subagent.list", map[string]any{"parentSessionId": "nobody"})
	requireError(t, r, codeInternal, "subagent catalog read failed", nil)

	b.catalogErr = errors.New("SESSION_QUERY_PERSISTENCE_FAILED: disk on fire at /secret/path")
	r = callRPC(t, h, "subagent.list", map[string]any{"parentSessionId": "p1"})
	requireError(t, r, codeInternal, "subagent catalog read failed", nil)

	b.catalogErr = wrap(codeCancelled, errors.New("CANCELLED"))
	r = callRPC(t, h, "subagent.list", map[string]any{"parentSessionId": "p1"})
	requireError(t, r, codeCancelled, "subagent catalog read was cancelled", nil)

	b.catalogErr = nil
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r = callRPCContext(t, ctx, h, "subagent.list", map[string]any{"parentSessionId": "p1"})
	requireError(t, r, codeCancelled, "subagent catalog read was cancelled", nil)
}

func TestSubagentHistoryReadsWithoutTouchingAnyAgent(t *testing.T) {
	b := catalogFixture()
	h := newTestHandler(t, b)

	modes := []any{nil, "continuable", "one-shot", "bogus", 7} // the address has no mode: ignored like any unknown key
	for _, mode := range modes {
		payload := map[string]any{"parentSessionId": "p1", "childSessionId": "worker"}
		if mode != nil {
			payload["mode"] = mode
		}
		r := callRPC(t, h, "subagent.history", payload)
		require.True(t, r.Result.OK)
		var value struct {
			Events []struct {
				Event json.RawMessage `json:"event"`
			} `json:"events"`
			HasMore bool `json:"hasMore"`
		}
		require.NoError(t, json.Unmarshal(r.Result.Value, &value))
		require.Len(t, value.Events, 1)
		require.JSONEq(t, `{"type":"user/message","seq":0,"time":1000,"surfaceOp":"append",
			"data":{"content":[{"type":"text","text":"scan the project"}]}}`, string(value.Events[0].Event))
		require.False(t, value.HasMore)
	}
	var reads []string
	for range modes {
		reads = append(reads, "ListChildren p1", "ReadSession worker")
	}
	require.Equal(t, reads, b.callLog(),
		"history consults the catalog and the transcript only: no LiveAgent, no Followup, no prompt")
}

func TestSubagentHistoryAddressErrors(t *testing.T) {
	cases := []struct {
		name    string
		payload map[string]any
		setup   func(*fakeBackend)
		code    fault.Code
		msg     string
		details map[string]any
		calls   []string
	}{
		{name: "not a child",
			payload: map[string]any{"parentSessionId": "p1", "childSessionId": "stranger"},
			code:    codeSubagentNotFound, msg: `session "stranger" is not a continuable direct child of "p1"`,
			details: map[string]any{"parentSessionId": "p1", "childSessionId": "stranger"},
			calls:   []string{"ListChildren p1"}},
		{name: "diagnostic fails before any transcript read",
			payload: map[string]any{"parentSessionId": "p1", "childSessionId": "future"},
			code:    codeSubagentCatalogDiagnostic, msg: `subagent "future" is unsupported`,
			details: map[string]any{"parentSessionId": "p1", "childSessionId": "future", "reason": "unsupported"},
			calls:   []string{"ListChildren p1"}},
		{name: "unknown parent",
			payload: map[string]any{"parentSessionId": "ghost", "childSessionId": "worker"},
			code:    codeSubagentNotFound, msg: `parent session "ghost" is unavailable`,
			details: map[string]any{"parentSessionId": "ghost", "childSessionId": "worker"},
			calls:   []string{"ListChildren ghost"}},
		{name: "catalog failure",
			payload: map[string]any{"parentSessionId": "p1", "childSessionId": "worker"},
			setup:   func(b *fakeBackend) { b.catalogErr = errors.New("descriptor secrets") },
			code:    codeInternal, msg: "subagent catalog read failed",
			calls: []string{"ListChildren p1"}},
		{name: "catalog cancelled",
			payload: map[string]any{"parentSessionId": "p1", "childSessionId": "worker"},
			setup:   func(b *fakeBackend) { b.catalogErr = wrap(codeCancelled, errors.New("CANCELLED")) },
			code:    codeCancelled, msg: "subagent catalog read was cancelled",
			calls: []string{"ListChildren p1"}},
		{name: "child vanished",
			payload: map[string]any{"parentSessionId": "p1", "childSessionId": "worker"},
			setup:   func(b *fakeBackend) { delete(b.transcripts, "worker") },
			code:    codeSubagentNotFound, msg: "subagent disappeared during history read",
			details: map[string]any{"parentSessionId": "p1", "childSessionId": "worker"},
			calls:   []string{"ListChildren p1", "ReadSession worker"}},
		{name: "parent changed",
			payload: map[string]any{"parentSessionId": "p1", "childSessionId": "worker"},
			setup:   func(b *fakeBackend) { b.transcripts["worker"] = transcript{ParentSessionID: "p2"} },
			code:    codeSubagentUnauthorized, msg: "subagent parent changed during history read",
			details: map[string]any{"childSessionId": "worker"},
			calls:   []string{"ListChildren p1", "ReadSession worker"}},
		{name: "read failure",
			payload: map[string]any{"parentSessionId": "p1", "childSessionId": "worker"},
			setup:   func(b *fakeBackend) { b.readErr = errors.New("EIO /secret") },
			code:    codeInternal, msg: "subagent history read failed",
			calls: []string{"ListChildren p1", "ReadSession worker"}},
		{name: "read cancelled",
			payload: map[string]any{"parentSessionId": "p1", "childSessionId": "worker"},
			setup:   func(b *fakeBackend) { b.readErr = wrap(codeCancelled, context.Canceled) },
			code:    codeCancelled, msg: "subagent history read was cancelled",
			calls: []string{"ListChildren p1", "ReadSession worker"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := catalogFixture()
			if tc.setup != nil {
				tc.setup(b)
			}
			r := callRPC(t, newTestHandler(t, b), "subagent.history", tc.payload)
			requireError(t, r, tc.code, tc.msg, tc.details)
			require.Equal(t, tc.calls, b.callLog())
		})
	}
}

func TestSubagentHistoryPagesWithBeforeSeq(t *testing.T) {
	b := catalogFixture()
	events := []session.Event{
		plain(0, "turn/start"), message(1, "user/message", "one"), message(2, "assistant/message", "two"),
		plain(3, "turn/end"), plain(4, "turn/start"), message(5, "user/message", "three"),
		plain(6, "assistant/chunk"), message(7, "assistant/message", "four", 6), plain(8, "turn/end"),
	}
	b.transcripts["worker"] = transcript{ParentSessionID: "p1", Events: events}
	h := newTestHandler(t, b)

	seqs := func(r response) ([]int64, bool) {
		var v struct {
			Events []struct {
				Event struct {
					Seq int64 `json:"seq"`
				} `json:"event"`
			} `json:"events"`
			HasMore bool `json:"hasMore"`
		}
		require.NoError(t, json.Unmarshal(r.Result.Value, &v))
		out := []int64{}
		for _, e := range v.Events {
			out = append(out, e.Event.Seq)
		}
		return out, v.HasMore
	}
	address := func(extra map[string]any) map[string]any {
		p := map[string]any{"parentSessionId": "p1", "childSessionId": "worker"}
		for k, v := range extra {
			p[k] = v
		}
		return p
	}

	tail, more := seqs(callRPC(t, h, "subagent.history", address(map[string]any{"maxMessages": 2})))
	require.Equal(t, []int64{5, 6, 7, 8}, tail)
	require.True(t, more)
	older, more := seqs(callRPC(t, h, "subagent.history", address(map[string]any{"maxMessages": 2, "beforeSeq": tail[0]})))
	require.Equal(t, []int64{1, 2, 3, 4}, older)
	require.True(t, more)
	oldest, more := seqs(callRPC(t, h, "subagent.history", address(map[string]any{"maxMessages": 2, "beforeSeq": older[0]})))
	require.Equal(t, []int64{0}, oldest)
	require.False(t, more)
	all, more := seqs(callRPC(t, h, "subagent.history", address(nil)))
	require.Len(t, all, len(events))
	require.False(t, more)
}

func TestSubagentPromptRoutesThroughTheExactLiveParent(t *testing.T) {
	b := catalogFixture()
	b.live["p1"] = true
	h := newTestHandler(t, b)

	r := callRPC(t, h, "subagent.prompt", map[string]any{"parentSessionId": "p1", "childSessionId": "reviewer", "mode": "one-shot",
		"content": []any{map[string]any{"type": "text", "text": "look again"}}})
	require.True(t, r.Result.OK)
	require.JSONEq(t, `{"messageId":"message-1"}`, string(r.Result.Value))
	require.Equal(t, []followupCall{{Parent: "p1", Child: "reviewer", Content: event.Text("look again"),
		Source: event.Source{Kind: "user", RPCID: "r-subagent.prompt"}}}, b.followups)
	require.Equal(t, []string{"LiveAgent p1", "ListChildren p1", "Followup p1 reviewer"}, b.callLog())
}

func TestSubagentPromptRequiresTheLiveParentBeforeAnyCatalogRead(t *testing.T) {
	b := catalogFixture()
	r := callRPC(t, newTestHandler(t, b), "subagent.prompt", map[string]any{"parentSessionId": "p1", "childSessionId": "worker",
		"content": []any{map[string]any{"type": "text", "text": "hi"}}})
	requireError(t, r, codeSubagentParentUnavailable, `parent session "p1" is not live`, map[string]any{"parentSessionId": "p1"})
	require.Equal(t, []string{"LiveAgent p1"}, b.callLog(), "no catalog read, no follow-up, no resume")
}

func TestSubagentPromptErrorMapping(t *testing.T) {
	childOnly := map[string]any{"childSessionId": "worker"}
	cases := []struct {
		name    string
		child   string
		err     error
		code    fault.Code
		msg     string
		details map[string]any
	}{
		{"diagnostic", "broken", nil, codeSubagentCatalogDiagnostic, `subagent "broken" is corrupt`,
			map[string]any{"parentSessionId": "p1", "childSessionId": "broken", "reason": "corrupt"}},
		{"not a child", "stranger", nil, codeSubagentNotFound, `session "stranger" is not a continuable direct child of "p1"`,
			map[string]any{"parentSessionId": "p1", "childSessionId": "stranger"}},
		{"not resumable", "worker", wrap(codeSubagentNotResumable, errors.New("NOT_RESUMABLE")),
			codeSubagentNotResumable, "subagent cannot be resumed", childOnly},
		{"unauthorized", "worker", wrap(codeSubagentUnauthorized, errors.New("UNAUTHORIZED")),
			codeSubagentUnauthorized, "subagent does not belong to this parent", childOnly},
		{"draining", "worker", wrap(codeSubagentNotDelivered, errors.New("DRAINING")),
			codeSubagentNotDelivered, "message was not delivered", childOnly},
		{"activation closing", "worker", wrap(codeSubagentNotDelivered, errors.New("ACTIVATION_CLOSING")),
			codeSubagentNotDelivered, "message was not delivered", childOnly},
		{"lease held by another process", "worker", classify(context.Background(), durable.LeaseHeld("worker", `owner "node-b"`)),
			codeSubagentNotDelivered, "message was not delivered", childOnly},
		{"cancelled", "worker", wrap(codeCancelled, context.Canceled), codeCancelled, "subagent prompt was cancelled", nil},
		{"the parent's lease was taken over", "worker", classify(context.Background(),
			fault.New(fault.Unauthorized, "parent epoch 1 is not the live lease", durable.Fenced("p1", 1))),
			codeSubagentParentUnavailable, `parent session "p1" is not live`, map[string]any{"parentSessionId": "p1"}},
		{"unexpected", "worker", fmt.Errorf("persona %q leaked", "secret"), codeInternal, "subagent prompt failed", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := catalogFixture()
			b.live["p1"] = true
			b.followupErr = tc.err
			r := callRPC(t, newTestHandler(t, b), "subagent.prompt", map[string]any{"parentSessionId": "p1", "childSessionId": tc.child,
				"content": []any{map[string]any{"type": "text", "text": "hi"}}})
			requireError(t, r, tc.code, tc.msg, tc.details)
		})
	}
}

// TestSubagentErrorDetailsKeepTheOriginalKeyOrder pins the bytes of details:
// parentSessionId, childSessionId, then reason, as the original writes them.
func TestSubagentErrorDetailsKeepTheOriginalKeyOrder(t *testing.T) {
	h := newTestHandler(t, catalogFixture())
	cases := []struct{ child, details string }{
		{"future", `"details":{"parentSessionId":"p1","childSessionId":"future","reason":"unsupported"}`},
		{"stranger", `"details":{"parentSessionId":"p1","childSessionId":"stranger"}`},
	}
	for _, tc := range cases {
		rec := post(h, "subagent.history", "application/json", `{"type":"client-request","rpcId":"r","method":"subagent.history",`+
			`"payload":{"childSessionId":"`+tc.child+`","parentSessionId":"p1"}}`)
		require.Contains(t, rec.Body.String(), tc.details)
	}
	rec := post(h, "subagent.history", "application/json", `{"type":"client-request","rpcId":"r","method":"subagent.history",`+
		`"payload":{"childSessionId":"worker","parentSessionId":"ghost"}}`)
	require.Contains(t, rec.Body.String(), `"details":{"parentSessionId":"ghost","childSessionId":"worker"}`)
}

func TestSubagentPromptToALiveParentTheCatalogDoesNotKnow(t *testing.T) {
	b := catalogFixture()
	b.live["p2"] = true
	r := callRPC(t, newTestHandler(t, b), "subagent.prompt", map[string]any{"parentSessionId": "p2", "childSessionId": "worker",
		"content": []any{map[string]any{"type": "text", "text": "hi"}}})
	requireError(t, r, codeSubagentNotFound, `parent session "p2" is unavailable`,
		map[string]any{"parentSessionId": "p2", "childSessionId": "worker"})
	require.Equal(t, []string{"LiveAgent p2", "ListChildren p2"}, b.callLog(), "no follow-up")
}

func TestSubagentPromptAbortedRequestWinsOverTheDeliveryFailure(t *testing.T) {
	b := catalogFixture()
	b.live["p1"] = true
	b.followupErr = wrap(codeSubagentNotDelivered, errors.New("DRAINING"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.onFollowup = cancel
	r := callRPCContext(t, ctx, newTestHandler(t, b), "subagent.prompt", map[string]any{"parentSessionId": "p1", "childSessionId": "worker",
		"content": []any{map[string]any{"type": "text", "text": "hi"}}})
	requireError(t, r, codeCancelled, "subagent prompt was cancelled", nil)
}

// TestSubagentPromptContentIsAnyArrayOfTypedBlocks: content is an array of
// objects with a string type: an empty array and blocks of
// any type pass and reach the continuation service as the original's parse
// keeps them: type first, every other key kept (event.Block's Raw).
func TestSubagentPromptContentIsAnyArrayOfTypedBlocks(t *testing.T) {
	b := catalogFixture()
	b.live["p1"] = true
	h := newTestHandler(t, b)
	for _, content := range []string{
		`[]`,
		`[{"type":"image","data":"x","mimeType":"image/png"},{"type":"text"},{"type":"text","text":"hi","extra":1},{"type":"text","text":5}]`,
	} {
		rec := post(h, "subagent.prompt", "application/json", `{"type":"client-request","rpcId":"r","method":"subagent.prompt",`+
			`"payload":{"parentSessionId":"p1","childSessionId":"reviewer","content":`+content+`}}`)
		r := decodeResponse(t, rec)
		require.True(t, r.Result.OK, rec.Body.String())
	}
	require.Len(t, b.followups, 2)
	require.Equal(t, []event.Block{}, b.followups[0].Content)
	require.Equal(t, []event.Block{
		{Type: "image", Raw: json.RawMessage(`{"type":"image","data":"x","mimeType":"image/png"}`)},
		{Type: "text", Raw: json.RawMessage(`{"type":"text"}`)},
		{Type: "text", Text: "hi", Raw: json.RawMessage(`{"type":"text","text":"hi","extra":1}`)},
		{Type: "text", Raw: json.RawMessage(`{"type":"text","text":5}`)},
	}, b.followups[1].Content)
}

// TestSubagentPromptWithEmptyOrNonTextContentRunsATurnOnTheRuntime: the
// real runtime logs such a prompt as a valid user/message holding the
// blocks as sent (type first), and the scripted child's turn completes.
func TestSubagentPromptWithEmptyOrNonTextContentRunsATurnOnTheRuntime(t *testing.T) {
	s := newRuntimeStack(t)
	p, child := startParentWithChild(t, s)
	for _, content := range []any{
		[]any{},
		[]any{map[string]any{"data": "x", "type": "image"}, map[string]any{"type": "text"}},
	} {
		r := callRPC(t, s.recorder, "subagent.prompt", map[string]any{"parentSessionId": p, "childSessionId": child, "content": content})
		require.True(t, r.Result.OK, string(r.Result.Value))
		s.settled(t, p, 1)
	}
	transcript, err := s.backend.ReadSession(context.Background(), child)
	require.NoError(t, err)
	var users, ends []string
	for _, e := range transcript.Events {
		var data struct {
			Content json.RawMessage `json:"content"`
			Reason  struct {
				Kind string `json:"kind"`
			} `json:"reason"`
		}
		require.NoError(t, json.Unmarshal(e.Data, &data))
		switch e.Type {
		case "user/message":
			users = append(users, string(data.Content))
		case "turn/end":
			ends = append(ends, data.Reason.Kind)
		}
	}
	require.Equal(t, []string{`[{"type":"text","text":"reply working"}]`, `[]`,
		`[{"type":"image","data":"x"},{"type":"text"}]`}, users)
	require.Equal(t, []string{"completed", "completed", "completed"}, ends)
}

// TestIDsInMessagesAreWrittenAsTheOriginalTemplate: the original builds its
// messages with JS templates (`parent session "${id}" is not live`), so an id
// is put between plain quotes with nothing escaped — not Go's %q.
func TestIDsInMessagesAreWrittenAsTheOriginalTemplate(t *testing.T) {
	odd := "a\"b\\c\u2028é\x01"
	other := "p\"2"
	text := []any{map[string]any{"type": "text", "text": "hi"}}

	b := newFakeBackend()
	b.catalogs[other] = []catalogEntry{{Kind: kindDiagnostic, ID: odd, Reason: "corrupt"}}
	h := newTestHandler(t, b)
	r := callRPC(t, h, "subagent.prompt", map[string]any{"parentSessionId": odd, "childSessionId": "c", "content": text})
	require.Equal(t, `parent session "`+odd+`" is not live`, r.Result.Error.Message)
	r = callRPC(t, h, "subagent.history", map[string]any{"parentSessionId": odd, "childSessionId": "c"})
	require.Equal(t, `parent session "`+odd+`" is unavailable`, r.Result.Error.Message)
	r = callRPC(t, h, "subagent.history", map[string]any{"parentSessionId": other, "childSessionId": odd})
	require.Equal(t, `subagent "`+odd+`" is corrupt`, r.Result.Error.Message)
	r = callRPC(t, h, "subagent.history", map[string]any{"parentSessionId": other, "childSessionId": "x\"y"})
	require.Equal(t, `session "x"y" is not a continuable direct child of "p"2"`, r.Result.Error.Message)

	b.promptErr = wrap(codeAgentBusy, errors.New("child"))
	r = callRPC(t, h, "session.prompt", map[string]any{"sessionId": odd, "mode": "queue", "content": text})
	require.Equal(t, `session "`+odd+`" is owned by subagent routing`, r.Result.Error.Message)

	rec := post(h, "session.list", "application/json",
		`{"type":"client-request","rpcId":"r","method":"sub\"agent\u2028","payload":{}}`)
	require.Equal(t, "method \"sub\"agent\u2028\" does not match path \"session.list\"", decodeResponse(t, rec).Result.Error.Message)
}

// TestSubagentPromptReachesAParentLiveElsewhere: a parent another process
// runs on a shared store is live for subagent.prompt: the address is
// verified and the message delivered from it (committed to the child's
// durable inbox by the runtime backend).
func TestSubagentPromptReachesAParentLiveElsewhere(t *testing.T) {
	b := catalogFixture()
	b.elsewhere = map[string]bool{"p1": true}
	r := callRPC(t, newTestHandler(t, b), "subagent.prompt", map[string]any{"parentSessionId": "p1", "childSessionId": "worker",
		"content": []any{map[string]any{"type": "text", "text": "hi"}}})
	require.True(t, r.Result.OK, "%+v", r.Result.Error)
	require.JSONEq(t, `{"messageId":"message-1"}`, string(r.Result.Value))
	require.Equal(t, []string{"LiveAgent p1", "LiveElsewhere p1", "ListChildren p1", "Followup p1 worker"}, b.callLog())
}

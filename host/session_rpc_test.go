package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

func TestSessionListIsTheOriginalsItems(t *testing.T) {
	b := newAttachingBackend()
	b.summaries = []sessionSummary{
		{ID: "p1", CreatedAt: 1, UpdatedAt: 7, Live: true, Running: true, Cwd: "/w", Title: "spawn a tree"},
		{ID: "c1", CreatedAt: 2, UpdatedAt: 3, ParentSessionID: "p1", Origin: "subagent", Live: true},
		{ID: "cold", CreatedAt: 3, UpdatedAt: 9, Title: "old work", Cwd: "/w", TitleAsOfSeq: new(int64(5))},
		{ID: "same", CreatedAt: 4, UpdatedAt: 7, LastTurn: &turnOutcome{Kind: "error", Message: "upstream exploded", Code: "E500"}},
	}
	b.attach(attachment{SessionID: "p1", LastSeq: 12})
	b.attach(attachment{SessionID: "c1", LastSeq: 1, Blank: true})
	h := newTestHandler(t, b)

	// updatedAt descending, ties in the backend's order; attached rows carry
	// blank from the attachment and the title baseline as of its last seq;
	// a stored row its title as of the stored event it was derived with,
	// and none when its log was not read. A live row says so; a row whose
	// last turn did not complete says how it ended.
	want := `{"type":"server-response","rpcId":"r","result":{"ok":true,"value":{"items":[` +
		`{"sessionId":"cold","updatedAt":9,"running":false,"blank":false,"cwd":"/w","projections":{"asOfSeq":5,"values":{"title":"old work"}}},` +
		`{"sessionId":"p1","updatedAt":7,"running":true,"blank":false,"cwd":"/w","projections":{"asOfSeq":12,"values":{"title":"spawn a tree"}},"live":true},` +
		`{"sessionId":"same","updatedAt":7,"running":false,"blank":false,"lastTurn":{"kind":"error","message":"upstream exploded","code":"E500"}},` +
		`{"sessionId":"c1","updatedAt":3,"running":false,"blank":true,"parentSessionId":"p1","projections":{"asOfSeq":1,"values":{"title":null}},"live":true}]}}}`
	require.Equal(t, want, rawCall(t, h, "session.list", `{}`))
	require.Equal(t, want, rawCall(t, h, "session.list", `{"cursor":"c","extra":1}`), "cursor is a reserved seat")

	bad := `{"type":"server-response","rpcId":"r","result":{"ok":false,"error":{"code":"bad-request","message":"invalid payload for session.list",` +
		`"details":{"issues":[{"code":"invalid_type","path":["cursor"],"message":"expected string, got `
	require.Equal(t, bad+`null"}]}}}}`, rawCall(t, h, "session.list", `{"cursor":null}`))
	require.Equal(t, bad+`number"}]}}}}`, rawCall(t, h, "session.list", `{"cursor":1}`))

	empty := newTestHandler(t, newFakeBackend())
	require.Equal(t, `{"type":"server-response","rpcId":"r","result":{"ok":true,"value":{"items":[]}}}`, rawCall(t, empty, "session.list", `{}`))
}

func TestSessionCreate(t *testing.T) {
	b := newFakeBackend()
	h := newHandler(b, Options{Cwd: "/home/serve"})
	t.Cleanup(h.Close)
	ok := func(id string) string {
		return `{"type":"server-response","rpcId":"r","result":{"ok":true,"value":{"sessionId":"` + id + `"}}}`
	}
	// The original mints session-<uuid> and defaults cwd to the serve
	// process's (defaults.cwd); a requested sessionId is created or adopted.
	minted := rawCall(t, h, "session.create", `{}`)
	require.Regexp(t, `"sessionId":"session-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"`, minted)
	var created struct {
		Result struct{ Value struct{ SessionID string } }
	}
	require.NoError(t, json.Unmarshal([]byte(minted), &created))
	require.Equal(t, ok("my-s1"), rawCall(t, h, "session.create", `{"cwd":"/elsewhere","extra":1,"sessionId":"my-s1"}`))
	require.Equal(t, []string{"CreateSession " + created.Result.Value.SessionID + " /home/serve false",
		"CreateSession my-s1 /elsewhere true"}, b.callLog())

	b.createErr = &sessionConflict{SessionID: "s\"1", RequestedCwd: "/b\"c", ExistingCwd: "/a", HasExisting: true}
	require.Equal(t, `{"type":"server-response","rpcId":"r","result":{"ok":false,"error":{"code":"session-conflict",`+
		`"message":"session \"s\"1\" already exists with cwd \"/a\"; requested \"/b\\\"c\"",`+
		`"details":{"sessionId":"s\"1","requestedCwd":"/b\"c","existingCwd":"/a"}}}}`,
		rawCall(t, h, "session.create", `{"sessionId":"s\"1","cwd":"/b\"c"}`))
	b.createErr = &sessionConflict{SessionID: "s1", RequestedCwd: "/b"}
	require.Equal(t, `{"type":"server-response","rpcId":"r","result":{"ok":false,"error":{"code":"session-conflict",`+
		`"message":"session \"s1\" already exists with cwd undefined; requested \"/b\"",`+
		`"details":{"sessionId":"s1","requestedCwd":"/b"}}}}`,
		rawCall(t, h, "session.create", `{"sessionId":"s1","cwd":"/b"}`))
	b.createErr = wrap(codeAgentBusy, errors.New("child"))
	require.Equal(t, `{"type":"server-response","rpcId":"r","result":{"ok":false,"error":{"code":"agent-busy",`+
		`"message":"session \"kid\" is owned by subagent routing",`+
		`"details":{"reason":"use subagent delivery for this child session"}}}}`,
		rawCall(t, h, "session.create", `{"sessionId":"kid","cwd":"/b"}`), "explicit-id adoption of a child (web-host.md §1.9)")
	b.createErr = nil
	b.calls = nil

	result := func(ok bool, body string) string {
		return `{"type":"server-response","rpcId":"r","result":{"ok":` + fmt.Sprint(ok) + `,` + body + `}}`
	}
	bad := func(issues string) string {
		return result(false, `"error":{"code":"bad-request","message":"invalid payload for session.create","details":{"issues":[`+issues+`]}}`)
	}
	both := `{"code":"conflict","path":[],"message":"session.create accepts workspaceId or cwd, not both"}`
	short := func(key string) string {
		return `{"code":"too_small","path":["` + key + `"],"message":"must not be empty"}`
	}
	for _, tc := range []struct{ payload, want string }{
		{`{"workspaceId":"w","cwd":"/x"}`, bad(both)},
		{`{"workspaceId":"","cwd":"/x"}`, bad(short("workspaceId") + `,` + both)},
		{`{"sessionId":"","cwd":"/x","workspaceId":"w"}`, bad(short("sessionId") + `,` + both)},
		{`{"workspaceId":"w","cwd":3}`, bad(`{"code":"invalid_type","path":["cwd"],"message":"expected string, got number"}`)},
		{`{"cwd":null}`, bad(`{"code":"invalid_type","path":["cwd"],"message":"expected string, got null"}`)},
		{`[]`, bad(`{"code":"invalid_type","path":[],"message":"expected object, got array"}`)},
		{`{"workspaceId":"w1"}`, result(false, `"error":{"code":"workspace-not-found","message":"workspace \"w1\" not found","details":{"workspaceId":"w1"}}`)},
	} {
		require.Equal(t, tc.want, rawCall(t, h, "session.create", tc.payload), tc.payload)
	}
	require.Empty(t, b.callLog(), "only valid requests this runtime can serve reach the backend")
}

func TestSessionHistoryPagesATopLevelTranscript(t *testing.T) {
	b := newFakeBackend()
	b.transcripts["p1"] = transcript{Events: []session.Event{
		message(0, "user/message", "a"), message(1, "assistant/message", "b"), message(2, "user/message", "c"),
	}}
	h := newTestHandler(t, b)

	r := callRPC(t, h, "session.history", map[string]any{"sessionId": "p1", "maxMessages": 2})
	require.Contains(t, string(r.Result.Value), `"hasMore":true`)
	require.True(t, strings.HasSuffix(string(r.Result.Value), `,"projections":{"asOfSeq":2,"values":{"title":"a"}}}`),
		"the tail page carries the session's projections, cut at its last event (web-host.md §2)")
	r = callRPC(t, h, "session.history", map[string]any{"sessionId": "p1", "beforeSeq": 2})
	require.NotContains(t, string(r.Result.Value), "projections", "an older page has none")
	b.transcripts["empty"] = transcript{}
	r = callRPC(t, h, "session.history", map[string]any{"sessionId": "empty"})
	require.Equal(t, `{"events":[],"hasMore":false,"projections":{"asOfSeq":-1,"values":{"title":null}}}`, string(r.Result.Value))
	r = callRPC(t, h, "session.history", map[string]any{"sessionId": "ghost"})
	requireError(t, r, codeSessionNotFound, `session "ghost" not found`, map[string]any{"sessionId": "ghost"})
	r = callRPC(t, h, "session.history", map[string]any{"sessionId": `g"ü`})
	requireError(t, r, codeSessionNotFound, `session "g"ü" not found`, map[string]any{"sessionId": `g"ü`})
	b.readErr = errors.New("EIO")
	r = callRPC(t, h, "session.history", map[string]any{"sessionId": "p1"})
	requireError(t, r, codeInternal, "session history read failed", nil)
	require.Equal(t, []string{"ReadSession p1", "ReadSession p1", "ReadSession empty", "ReadSession ghost", `ReadSession g"ü`, "ReadSession p1"}, b.callLog())
}

func TestSessionPrompt(t *testing.T) {
	text := []any{map[string]any{"type": "text", "text": "spawn a: b"}}
	cases := []struct {
		name    string
		err     error
		code    fault.Code
		msg     string
		details map[string]any
	}{
		{"unknown", wrap(codeSessionNotFound, errors.New("nope")), codeSessionNotFound, `session "s1" not found`,
			map[string]any{"sessionId": "s1"}},
		{"a continuable child", wrap(codeAgentBusy, errors.New("child")), codeAgentBusy, `session "s1" is owned by subagent routing`,
			map[string]any{"reason": "use subagent delivery for this child session"}},
		{"failure", errors.New("EIO"), codeInternal, "session prompt failed", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newFakeBackend()
			b.promptErr = tc.err
			r := callRPC(t, newTestHandler(t, b), "session.prompt", map[string]any{"sessionId": "s1", "mode": "queue", "content": text})
			requireError(t, r, tc.code, tc.msg, tc.details)
		})
	}

	b := newFakeBackend()
	r := callRPC(t, newTestHandler(t, b), "session.prompt", map[string]any{"sessionId": "s1", "mode": "queue", "content": text})
	require.JSONEq(t, `{"accepted":true}`, string(r.Result.Value))
	require.Equal(t, []string{"PromptSession s1 user/r-session.prompt"}, b.callLog())
}

// rawCall posts payload (JSON text) to method and returns the response body
// as written, for byte comparisons with the original's JSON.stringify.
func rawCall(t *testing.T, h http.Handler, method, payload string) string {
	t.Helper()
	rec := post(h, method, "application/json",
		`{"type":"client-request","rpcId":"r","method":"`+method+`","payload":`+payload+`}`)
	require.Equal(t, http.StatusOK, rec.Code)
	return strings.TrimSuffix(rec.Body.String(), "\n")
}

func TestSessionPromptModes(t *testing.T) {
	text := `[{"type":"text","text":"reply hi","extra":1}]`
	for _, mode := range []string{"queue", "steer"} {
		b := newFakeBackend()
		got := rawCall(t, newTestHandler(t, b), "session.prompt", `{"sessionId":"s1","mode":"`+mode+`","content":`+text+`}`)
		require.Equal(t, `{"type":"server-response","rpcId":"r","result":{"ok":true,"value":{"accepted":true}}}`, got)
		require.Equal(t, []string{"PromptSession s1 user/r"}, b.callLog(), "steer is delivered as a queued follow-up")
	}

	mode := `{"code":"invalid_value","path":["mode"],"message":"expected one of \"queue\", \"steer\""}`
	bad := func(issues string) string {
		return `{"type":"server-response","rpcId":"r","result":{"ok":false,"error":{"code":"bad-request",` +
			`"message":"invalid payload for session.prompt","details":{"issues":[` + issues + `]}}}}`
	}
	b := newFakeBackend()
	h := newTestHandler(t, b)
	for _, value := range []string{``, `"mode":"x",`, `"mode":null,`, `"mode":"Queue",`} {
		require.Equal(t, bad(mode), rawCall(t, h, "session.prompt", `{"sessionId":"s",`+value+`"content":[]}`), value)
	}
	require.Equal(t, bad(`{"code":"too_small","path":["sessionId"],"message":"must not be empty"},`+mode+`,`+
		`{"code":"invalid_type","path":["content"],"message":"required array is missing"}`),
		rawCall(t, h, "session.prompt", `{"sessionId":"","mode":"x"}`))
	require.Equal(t, bad(`{"code":"invalid_type","path":[],"message":"expected object, got array"}`),
		rawCall(t, h, "session.prompt", `[]`))
	require.Empty(t, b.callLog())
}

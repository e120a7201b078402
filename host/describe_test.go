package host

import (
	"encoding/json"
	"testing"

	"github.com/dsh-actors/dsh-actors"
	"github.com/stretchr/testify/require"
)

// TestHostDescribe: host.describe answers the version, session.create's
// default cwd and the attached sessions as the mux baseline counts them
// (those live at the start, then the added ones less the removed ones),
// with no provider or model for the scripted agent; unknown keys are
// ignored as the original's non-strict schema strips them.
func TestHostDescribe(t *testing.T) {
	b := newAttachingBackend()
	b.attach(attachment{SessionID: "p1", LastSeq: 3})
	h := newHandler(b, Options{Cwd: "/work/project"})
	t.Cleanup(h.Close)
	want := func(n string) string {
		return `{"type":"server-response","rpcId":"r","result":{"ok":true,"value":{"version":"0","cwd":"/work/project","attachedSessions":` + n + `}}}`
	}
	require.Equal(t, want("1"), rawCall(t, h, "host.describe", `{}`))
	require.Equal(t, want("1"), rawCall(t, h, "host.describe", `{"extra":1}`))

	b.attach(attachment{SessionID: "p2", LastSeq: -1, Blank: true})
	b.emit(notice{Kind: sessionAdded, SessionID: "p2"})
	require.Equal(t, want("2"), rawCall(t, h, "host.describe", `{}`), "after p2 was added")
	b.detach("p1")
	b.emit(notice{Kind: sessionRemoved, SessionID: "p1"})
	require.Equal(t, want("1"), rawCall(t, h, "host.describe", `{}`), "after p1 was removed")

	none := newTestHandler(t, newFakeBackend())
	require.Contains(t, rawCall(t, none, "host.describe", `{}`), `"attachedSessions":0}`, "a backend that attaches nothing")
}

// TestHostDescribeNamesTheModelRoute: with a model agent's route the value
// carries provider and model between cwd and attachedSessions.
func TestHostDescribeNamesTheModelRoute(t *testing.T) {
	h := newHandler(newFakeBackend(), Options{Cwd: "/w"})
	t.Cleanup(h.Close)
	h.route = route{provider: "openai", model: "qwen3"}
	require.Equal(t, `{"type":"server-response","rpcId":"r","result":{"ok":true,"value":`+
		`{"version":"0","cwd":"/w","provider":"openai","model":"qwen3","attachedSessions":0}}}`,
		rawCall(t, h, "host.describe", `{}`))
}

// TestHostDescribeRefusesANonObjectPayload: the payload must be an object,
// refused as bad-request like every method's.
func TestHostDescribeRefusesANonObjectPayload(t *testing.T) {
	h := newTestHandler(t, newFakeBackend())
	bad := `{"type":"server-response","rpcId":"r","result":{"ok":false,"error":{"code":"bad-request","message":"invalid payload for host.describe",` +
		`"details":{"issues":[{"code":"invalid_type","path":[],"message":"expected object, got `
	for payload, got := range map[string]string{`null`: "null", `[]`: "array", `"x"`: "string", `7`: "number"} {
		require.Equal(t, bad+got+`"}]}}}}`, rawCall(t, h, "host.describe", payload), "payload %s", payload)
	}
}

// TestHostDescribeOverARuntime: New reads the runtime's route, and a
// session session.create made counts as attached at once.
func TestHostDescribeOverARuntime(t *testing.T) {
	rt, err := dsh.Open(dsh.Options{Provider: "openai", Model: "qwen3"})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	h := New(rt, Options{Cwd: t.TempDir()})
	t.Cleanup(h.Close)
	value := func() string {
		var body struct {
			Result struct{ Value json.RawMessage }
		}
		require.NoError(t, json.Unmarshal([]byte(rawCall(t, h, "host.describe", `{}`)), &body))
		return string(body.Result.Value)
	}
	cwd, err := json.Marshal(h.opts.Cwd)
	require.NoError(t, err)
	prefix := `{"version":"0","cwd":` + string(cwd) + `,"provider":"openai","model":"qwen3","attachedSessions":`
	require.Equal(t, prefix+`0}`, value())
	require.Contains(t, rawCall(t, h, "session.create", `{}`), `"ok":true`)
	require.Equal(t, prefix+`1}`, value(), "after session.create")
}

package query

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/logpath"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/session"
)

// These tests pin behaviour found by running the original harness's query
// and listing (commit 751fa4c8b6) and this package over the same logs.

func steeringMessage(text string) session.Event {
	return appended(ev("steering/message", map[string]any{"turn": 1, "message": map[string]any{
		"content": []map[string]string{{"type": "text", "text": text}},
		"source":  map[string]string{"kind": "user"}, "role": "user", "id": "steer-" + text,
	}}))
}

// steering/message (an older mid-turn user message) is a surface
// event: it must carry a surfaceOp and joins the surface like user/message.
func TestSteeringMessagesAreSurfaceEvents(t *testing.T) {
	w := parentWorld(t)
	w.persist(header("steered", "", 1), logOf(
		ev("turn/start", map[string]int{"turn": 1}),
		userMessage("go"),
		steeringMessage("faster"),
		assistantMessage("done"),
		ev("turn/end", map[string]any{"turn": 1, "reason": map[string]string{"kind": "completed"}}),
	))
	records, err := w.q.ListEvents(context.Background(), "steered")
	require.NoError(t, err)
	require.Equal(t, []Surface{surfaceLogOnly, surfaceCurrent, surfaceCurrent, surfaceCurrent, surfaceLogOnly},
		surfaces(records))

	w.persist(header("bare", "", 2), logOf(withoutSurface(steeringMessage("x"))))
	_, err = w.q.ListEvents(context.Background(), "bare")
	require.ErrorIs(t, err, fault.QueryInvalidSurface)
	require.EqualError(t, err,
		`invalid session surface: session event "steering/message" is surface-eligible and requires a surfaceOp marker`)

	w.persist(header("child", "parent", 3), logOf(
		descriptorEvent(descriptorPayload("steered child")),
		ev("turn/start", map[string]int{"turn": 1}),
		steeringMessage("more"),
	))
	require.Equal(t, []Entry{child("child", "steered child", StatusComplete)}, w.mustList("parent"))
}

// A log whose first line the store's listing skips is, as for the
// original's list-first read, a session that does not exist.
func TestAnUnlistableLogIsNotFound(t *testing.T) {
	w := newWorld(t)
	path, err := logpath.Path(w.jsonl.Root(), "", "old")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path,
		[]byte(`{"type":"session","version":0,"id":"old","createdAt":1}`+"\n"), 0o600)) // no delegationDepth

	_, err = w.q.ListEvents(context.Background(), "old")
	require.ErrorIs(t, err, fault.QuerySessionNotFound)
	require.EqualError(t, err, `session "old" not found`)
	_, err = w.q.readEvent(context.Background(), readRequest{SessionID: "old"})
	require.ErrorIs(t, err, fault.QuerySessionNotFound)
	_, err = w.q.ReadSession(context.Background(), "old")
	require.ErrorIs(t, err, fault.QuerySessionNotFound)
}

// A listed child whose log holds a malformed message cannot be inspected:
// it lists as unavailable, not as a healthy child.
func TestAChildWithAMalformedMessageIsUnavailable(t *testing.T) {
	w := parentWorld(t)
	w.authorChild("healthy", "parent", 1, "fine")
	w.persist(header("broken", "parent", 2), logOf(
		descriptorEvent(descriptorPayload("broken")),
		appended(ev("user/message", map[string]any{"content": []any{}, "source": map[string]string{"kind": "user"},
			"role": "user", "id": ""})),
	))
	require.Equal(t, []Entry{
		child("healthy", "fine", StatusComplete),
		diag("broken", reasonUnavailable),
	}, w.mustList("parent"))
	_, err := w.q.ListEvents(context.Background(), "broken")
	require.ErrorIs(t, err, fault.QueryPersistenceFailed)
	require.ErrorIs(t, err, session.ErrCorrupt)
}

// The original's snapshot logs carry the placeholder "{{cwd}}", a relative
// cwd. The original lists and inspects such logs (it checks cwd
// only when it builds a Session to resume one), so a child stored that way
// lists as a complete child, not as unavailable, and its transcript reads.
func TestALogWithARelativeCwdReads(t *testing.T) {
	w := newWorld(t)
	write := func(id, content string) {
		path, err := logpath.Path(w.jsonl.Root(), "{{cwd}}", id)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	}
	write("p", `{"type":"session","version":0,"id":"p","createdAt":1,"cwd":"{{cwd}}","delegationDepth":0}`+"\n"+
		`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`+"\n")
	write("c", `{"type":"session","version":0,"id":"c","createdAt":2,"cwd":"{{cwd}}","parentSession":"p","delegationDepth":1}`+"\n"+
		`{"type":"subagent/descriptor","seq":0,"time":2,"data":{"version":1,"provider":"spawn","label":"relative"}}`+"\n"+
		`{"type":"session/end-seed","seq":1,"time":2,"data":{}}`+"\n"+
		`{"type":"turn/start","seq":2,"time":3,"data":{"turn":1}}`+"\n"+
		`{"type":"turn/end","seq":3,"time":4,"data":{"turn":1,"reason":{"kind":"completed"}}}`+"\n")

	require.Equal(t, []Entry{child("c", "relative", StatusComplete)}, w.mustList("p"))
	log, err := w.q.ReadSession(context.Background(), "c")
	require.NoError(t, err)
	require.Equal(t, "{{cwd}}", log.Header.Cwd)
	require.Len(t, log.Events, 4)
	records, err := w.q.ListEvents(context.Background(), "c")
	require.NoError(t, err)
	require.Len(t, records, 4)
}

package query

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/logpath"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/session"
)

func surfaces(records []EventRecord) []Surface {
	out := make([]Surface, len(records))
	for i, r := range records {
		out[i] = r.Surface
	}
	return out
}

func TestListEventsClassifiesCurrentShadowedAndLogOnly(t *testing.T) {
	w := newWorld(t)
	w.persist(header("s", "", 1), logOf(
		ev("turn/start", map[string]int{"turn": 1}),
		userMessage("one"),
		withSources(assistantMessage("two"), 1),
		withSources(replacing(userMessage("summary"), 1, 2), 1, 2),
		descriptorEvent(descriptorPayload("l")),
	))
	records, err := w.q.ListEvents(context.Background(), "s")
	require.NoError(t, err)
	require.Equal(t, []Surface{surfaceLogOnly, surfaceShadowed, surfaceShadowed, surfaceCurrent, surfaceLogOnly},
		surfaces(records))
	require.Equal(t, EventRecord{SessionID: "s", Seq: 4, Type: "subagent/descriptor",
		Time: 1_700_000_000_000, Surface: surfaceLogOnly}, records[4])
}

func TestListEventsRejectsAnInvalidSurface(t *testing.T) {
	w := newWorld(t)
	w.persist(header("s", "", 1), logOf(withoutSurface(userMessage("bare"))))
	_, err := w.q.ListEvents(context.Background(), "s")
	require.ErrorIs(t, err, fault.QueryInvalidSurface)
	require.EqualError(t, err,
		`invalid session surface: session event "user/message" is surface-eligible and requires a surfaceOp marker`)
}

// Each row breaks one surface rule: which types carry surfaceOp and
// sourceEventSeqs, and what those may hold.
func TestSurfaceFoldRules(t *testing.T) {
	user := userMessage("u")
	toolResult := func(callID, text string) session.Event {
		return appended(ev("tool/result", map[string]any{"turn": 1, "message": map[string]any{
			"source":  map[string]string{"kind": "tool", "callId": callID},
			"content": []map[string]any{{"type": "tool-result", "toolCallId": callID, "content": text}},
			"role":    "user", "id": "r-" + text,
		}}))
	}
	cases := []struct {
		name   string
		events []session.Event
		msg    string
	}{
		{"seq gap", []session.Event{{Type: "turn/start", Seq: 1, Data: rawJSON(1)}},
			"session event seq 1 is not contiguous; expected 0"},
		{"surfaceOp on a non-surface event", logOf(appended(ev("turn/start", 1))),
			`session event "turn/start" is not surface-eligible and cannot carry surfaceOp`},
		{"sources on a non-surface event", logOf(ev("turn/start", 1), withSources(ev("turn/end", 1), 0)),
			`session event "turn/end" is not surface-eligible and cannot carry sourceEventSeqs`},
		{"string surfaceOp", logOf(func() session.Event { e := user; e.SurfaceOp = json.RawMessage(`"prepend"`); return e }()),
			`session event "user/message" carries an invalid surfaceOp`},
		{"null surfaceOp", logOf(func() session.Event { e := user; e.SurfaceOp = json.RawMessage(`null`); return e }()),
			`session event "user/message" carries an invalid surfaceOp`},
		{"extra replace key", logOf(user, func() session.Event {
			e := user
			e.SurfaceOp = json.RawMessage(`{"op":"replace","start":0,"end":0,"x":1}`)
			return e
		}()), `session event "user/message" carries an invalid replace surfaceOp`},
		{"missing start", logOf(user, withSources(replacing(user, 5, 0), 0)),
			"surface replace: start seq 5 not found in surface"},
		{"missing end", logOf(user, withSources(replacing(user, 0, 7), 0)),
			"surface replace: end seq 7 not found in surface"},
		{"reversed range", logOf(user, user, withSources(replacing(user, 1, 0), 0, 1)),
			"surface replace: start seq 1 (index 1) is after end seq 0 (index 0)"},
		{"empty sources", logOf(withSources(user, []int64{}...)),
			"sourceEventSeqs must not be empty except on assistant/message"},
		{"duplicate sources", logOf(user, user, withSources(user, 0, 0)),
			"sourceEventSeqs must not contain duplicates"},
		{"later source", logOf(withSources(user, 0)),
			"sourceEventSeqs must reference earlier events: 0 >= current seq 0"},
		{"negative source", logOf(withSources(user, -1)),
			`session event "user/message" sourceEventSeqs must densely contain non-negative safe integers`},
		{"unshadowed source", logOf(user, user, withSources(replacing(user, 0, 1), 0)),
			"surface replace: sourceEventSeqs must include every shadowed surface node; missing 1"},
		{"tool result over two nodes", logOf(toolResult("c", "a"), toolResult("c", "b"),
			withSources(replacing(toolResult("c", "x"), 0, 1), 0, 1)),
			"tool/result surface replacement must rewrite exactly one current node"},
		{"tool result over a user message", logOf(user, withSources(replacing(toolResult("c", "x"), 0, 0), 0)),
			"tool/result surface replacement must target a current tool/result"},
		{"tool result changing more than content", logOf(toolResult("c", "a"),
			withSources(replacing(toolResult("d", "x"), 0, 0), 0)),
			"tool/result surface replacement may change only content"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := foldSurface(tc.events)
			require.EqualError(t, err, tc.msg)
		})
	}
}

func TestSurfaceFoldAcceptsAToolResultContentRewrite(t *testing.T) {
	result := func(text string) session.Event {
		return appended(ev("tool/result", map[string]any{"message": map[string]any{
			"content": []map[string]any{{"type": "tool-result", "toolCallId": "c", "content": text}}, "id": "r",
		}}))
	}
	classes, err := foldSurface(logOf(result("long"), withSources(replacing(result("short"), 0, 0), 0)))
	require.NoError(t, err)
	require.Equal(t, []Surface{surfaceShadowed, surfaceCurrent}, classes)
}

func TestReadEventReturnsABoundedWindow(t *testing.T) {
	w := newWorld(t)
	events := logOf(ev("step/start", 0), ev("hook/invoked", 1), ev("hook/result", 2), ev("todo/write", 3), ev("step/end", 4))
	w.persist(header("s", "", 7), events)

	win, err := w.q.readEvent(context.Background(), readRequest{SessionID: "s", Seq: 2, Before: 1, After: 1})
	require.NoError(t, err)
	require.Equal(t, header("s", "", 7), win.Session)
	require.Equal(t, "hook/result", win.Target.Type)
	require.Equal(t, int64(1), win.StartSeq)
	require.Equal(t, int64(3), win.EndSeq)
	require.Len(t, win.Events, 3)

	win, err = w.q.readEvent(context.Background(), readRequest{SessionID: "s", Seq: 4, Before: 50, After: 50})
	require.NoError(t, err)
	require.Equal(t, int64(0), win.StartSeq)
	require.Equal(t, int64(4), win.EndSeq)

	for _, seq := range []int64{5, -1} {
		_, err = w.q.readEvent(context.Background(), readRequest{SessionID: "s", Seq: seq})
		require.ErrorIs(t, err, fault.QueryEventNotFound)
	}
	require.EqualError(t, err, `session "s" has no event at seq -1`)
}

func TestReadEventValidatesTheWindowBeforeAnyIO(t *testing.T) {
	w := newWorld(t)
	for _, req := range []readRequest{
		{SessionID: "nobody", Before: -1},
		{SessionID: "nobody", Before: 51},
		{SessionID: "nobody", After: 51},
	} {
		_, err := w.q.readEvent(context.Background(), req)
		require.ErrorIs(t, err, fault.QueryInvalidWindow)
	}
	_, err := w.q.readEvent(context.Background(), readRequest{SessionID: "nobody", Before: 51})
	require.EqualError(t, err, "before must be an integer between 0 and 50")
	_, err = w.q.readEvent(context.Background(), readRequest{SessionID: "nobody", After: -3})
	require.EqualError(t, err, "after must be an integer between 0 and 50")
	lists, inspects := w.store.counts()
	require.Zero(t, lists+inspects)
}

func TestReadEventDoesNotValidateTheSurface(t *testing.T) {
	w := newWorld(t)
	w.persist(header("s", "", 1), logOf(withoutSurface(userMessage("bare"))))
	win, err := w.q.readEvent(context.Background(), readRequest{SessionID: "s"})
	require.NoError(t, err)
	require.Equal(t, "user/message", win.Target.Type)
}

func TestLiveReadsNeverTouchPersistence(t *testing.T) {
	w := newWorld(t)
	w.goLive(header("live", "", 1), childEvents(descriptorPayload("l")))
	w.store.mu.Lock()
	w.store.listErr, w.store.inspectErr = errors.New("list broken"), errors.New("inspect broken")
	w.store.mu.Unlock()

	_, err := w.q.ListEvents(context.Background(), "live")
	require.NoError(t, err)
	_, err = w.q.readEvent(context.Background(), readRequest{SessionID: "live", Seq: 2})
	require.NoError(t, err)
	lists, inspects := w.store.counts()
	require.Zero(t, lists+inspects)

	// A failed read lists the store, as the original's list-first read did;
	// the listing failure is what it reports.
	_, err = w.q.ListEvents(context.Background(), "stored")
	require.ErrorIs(t, err, fault.QueryPersistenceFailed)
	require.EqualError(t, err, `session persistence listing failed: list broken`)
}

func TestLoadReportsAbsentAndUnreadableSessions(t *testing.T) {
	w := newWorld(t)
	_, err := w.q.ListEvents(context.Background(), "nobody")
	require.ErrorIs(t, err, fault.QuerySessionNotFound)
	require.EqualError(t, err, `session "nobody" not found`)

	liveOnly := New(memoryOnly(t))
	_, err = liveOnly.readEvent(context.Background(), readRequest{SessionID: "nobody"})
	require.ErrorIs(t, err, fault.QuerySessionNotFound)

	w.persist(header("damaged", "", 1), childEvents(descriptorPayload("l")))
	damageCommittedRegion(t, w.jsonl.Root(), "damaged")
	_, err = w.q.ListEvents(context.Background(), "damaged")
	require.ErrorIs(t, err, fault.QueryPersistenceFailed)
	require.ErrorIs(t, err, session.ErrCorrupt)
	require.Contains(t, err.Error(), `failed to inspect session "damaged": `)
}

// damageCommittedRegion replaces the second event line of id's log with
// garbage; the committed turn/end after it makes that corruption, not a
// torn tail.
func damageCommittedRegion(t *testing.T, root, id string) {
	t.Helper()
	path := logPath(t, root, id)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := splitLines(data)
	lines[2] = []byte("{garbage")
	require.NoError(t, os.WriteFile(path, joinLines(lines), 0o600))
}

func logPath(t *testing.T, root, id string) string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(root, "*", id, logpath.FileName))
	require.NoError(t, err)
	require.Len(t, matches, 1)
	return matches[0]
}

func splitLines(data []byte) [][]byte {
	var lines [][]byte
	for len(data) > 0 {
		i := 0
		for i < len(data) && data[i] != '\n' {
			i++
		}
		lines = append(lines, data[:i])
		data = data[min(i+1, len(data)):]
	}
	return lines
}

func joinLines(lines [][]byte) []byte {
	var out []byte
	for _, l := range lines {
		out = append(append(out, l...), '\n')
	}
	return out
}

func TestReadEventPreservesTheCancellationCause(t *testing.T) {
	w := newWorld(t)
	w.persist(header("s", "", 1), logOf(ev("a", 0)))
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("stop")
	cancel(cause)
	_, err := w.q.readEvent(ctx, readRequest{SessionID: "s"})
	require.Same(t, cause, err)
	_, inspects := w.store.counts()
	require.Zero(t, inspects)
}

func TestReadSessionReturnsADetachedLogWithoutSurfaceValidation(t *testing.T) {
	w := newWorld(t)
	events := logOf(withoutSurface(userMessage("bare")), ev("turn/end", 1))
	w.persist(header("s", "", 1), events)
	log, err := w.q.ReadSession(context.Background(), "s")
	require.NoError(t, err)
	require.Equal(t, header("s", "", 1), log.Header)
	require.Len(t, log.Events, 2)

	l := w.goLive(header("live", "", 2), logOf(userMessage("hi")))
	log, err = w.q.ReadSession(context.Background(), "live")
	require.NoError(t, err)
	log.Events[0].Data[0] = 'X'
	require.Equal(t, byte('{'), l.Events()[0].Data[0], "the live log is not shared")

	_, err = w.q.ReadSession(context.Background(), "nobody")
	require.ErrorIs(t, err, fault.QuerySessionNotFound)
}

package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

var userSource = event.Source{Kind: "user"}

// openRuntime opens a runtime over a JSONL store at root and its backend.
func openRuntime(t *testing.T, root string) (*actors.Runtime, *runtimeBackend) {
	t.Helper()
	opened, err := dsh.Open(dsh.Options{Dir: root, Compression: "none"}) // the tests touch the plain log files
	require.NoError(t, err)
	b := newRuntimeBackend(opened)
	t.Cleanup(func() {
		b.close()
		require.NoError(t, opened.Close())
	})
	return opened.Actors(), b
}

// converse prompts a live agent and waits (a minute at most) for its
// turn to end.
func converse(t *testing.T, h *parent.Handle, text string) {
	t.Helper()
	_, err := h.Followup(context.Background(), event.Text(text), userSource)
	require.NoError(t, err)
	waitIdle(t, h, text)
}

// waitIdle waits a minute at most for h's turns to end, naming the
// prompt waited for when they do not.
func waitIdle(t *testing.T, h *parent.Handle, prompt string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, h.Activation().WhenIdle(ctx), "waiting for %s's turn on %q to end", h.ID(), prompt)
}

func TestRuntimeBackendListsStoredAndLiveSessionsWithoutActivating(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	rt, _ := openRuntime(t, root)
	stored, err := rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: "stored", CreatedAt: 1000}})
	require.NoError(t, err)
	converse(t, stored, "reply first line\nreply second")
	require.NoError(t, rt.Close(ctx))

	// A cold session's updatedAt is its log file's mtimeMs, as Node's
	// fs.stat computes it (sec·1e3 + nsec/1e6).
	mtime := time.Unix(1764522000, 123456789)
	logPath, err := logpath.Path(root, "", "stored")
	require.NoError(t, err)
	require.NoError(t, os.Chtimes(logPath, mtime, mtime))

	rt, b := openRuntime(t, root)
	live, err := rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: "live", CreatedAt: 2000, Cwd: "/w"}})
	require.NoError(t, err)

	summaries, err := b.ListSessions(ctx)
	require.NoError(t, err)
	require.Len(t, summaries, 2)
	require.Equal(t, sessionSummary{ID: "live", CreatedAt: 2000, UpdatedAt: 2000, Live: true, Cwd: "/w"}, summaries[0])
	require.Equal(t, "stored", summaries[1].ID)
	require.False(t, summaries[1].Live)
	require.Equal(t, "reply first line", summaries[1].Title)
	require.Equal(t, 1764522000*1e3+123456789/1e6, summaries[1].UpdatedAt)
	require.Nil(t, rt.Registry().Get("stored"), "listing never resumes a stored session")

	converse(t, live, "reply hello")
	summaries, err = b.ListSessions(ctx)
	require.NoError(t, err)
	require.Equal(t, "reply hello", summaries[0].Title, "facts follow live appends")
	require.Greater(t, summaries[0].UpdatedAt, float64(2000))
	events := rt.Sessions().Get("live").Events()
	require.Equal(t, float64(events[len(events)-1].Time), summaries[0].UpdatedAt, "a live session's is its last event's time")

	transcript, err := b.ReadSession(ctx, "stored")
	require.NoError(t, err)
	require.NotEmpty(t, transcript.Events)
	require.Nil(t, rt.Registry().Get("stored"), "reading never resumes a stored session")
	_, err = b.ReadSession(ctx, "ghost")
	require.ErrorIs(t, err, codeSessionNotFound)

	// Picking a session up is not activity: a resumed session's end-seed
	// does not move its updatedAt (the original's lastActivityTime).
	_, err = rt.ResumeAgent(ctx, "stored", parent.Spec{})
	require.NoError(t, err)
	events = rt.Sessions().Get("stored").Events()
	require.Equal(t, "session/end-seed", events[len(events)-1].Type)
	summaries, err = b.ListSessions(ctx)
	require.NoError(t, err)
	require.Equal(t, "stored", summaries[1].ID, "live now, after live")
	require.Equal(t, float64(events[len(events)-2].Time), summaries[1].UpdatedAt)
}

// TestRuntimeBackendListsInTheOriginalsOrder: live sessions in the order
// they became live, then stored ones in the store's listing order (folder
// names, byte order), which session.list's stable sort by updatedAt keeps
// for ties — not creation order.
func TestRuntimeBackendListsInTheOriginalsOrder(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	rt, _ := openRuntime(t, root)
	for i, id := range []string{"b", "a", "d", "c"} {
		_, err := rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: id, CreatedAt: int64(1000 + i)}})
		require.NoError(t, err)
	}
	require.NoError(t, rt.Close(ctx))
	same := time.Unix(1764522000, 0)
	for _, id := range []string{"a", "b", "c", "d"} {
		path, err := logpath.Path(root, "", id)
		require.NoError(t, err)
		require.NoError(t, os.Chtimes(path, same, same))
	}

	rt, b := openRuntime(t, root)
	for _, id := range []string{"d", "c"} { // resumed out of creation order
		_, err := rt.ResumeAgent(ctx, id, parent.Spec{})
		require.NoError(t, err)
	}
	summaries, err := b.ListSessions(ctx)
	require.NoError(t, err)
	var ids []string
	for _, s := range summaries {
		ids = append(ids, s.ID)
	}
	require.Equal(t, []string{"d", "c", "a", "b"}, ids)
}

func TestRuntimeBackendPromptsTopLevelSessionsOnly(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	rt, _ := openRuntime(t, root)
	_, err := rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: "top"}})
	require.NoError(t, err)
	_, err = rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: "kid", ParentSession: "top", Origin: "subagent"}})
	require.NoError(t, err)
	require.NoError(t, rt.Close(ctx))

	rt, b := openRuntime(t, root)
	id, err := b.PromptSession(ctx, "top", event.Text("reply resumed"), event.Source{Kind: "user", RPCID: "r1"})
	require.NoError(t, err)
	require.NotEmpty(t, id)
	h := rt.Registry().Get("top")
	require.NotNil(t, h, "an ordinary prompt resumes a stored top-level session")
	require.NoError(t, h.Activation().WhenIdle(ctx))

	_, err = b.PromptSession(ctx, "kid", event.Text("reply no"), userSource)
	require.ErrorIs(t, err, codeAgentBusy)
	require.Nil(t, rt.Registry().Get("kid"), "a child is never resumed by the ordinary route")
	_, err = b.PromptSession(ctx, "ghost", event.Text("reply no"), userSource)
	require.ErrorIs(t, err, codeSessionNotFound)

	created, err := b.CreateSession(ctx, createRequest{ID: "made", Cwd: filepath.Join(root, "w")})
	require.NoError(t, err)
	require.True(t, created.Live)
	require.NotNil(t, rt.Registry().Get(created.ID))
}

// A top-level session whose lease another process holds (it runs there)
// is not resumed here: session.prompt answers agent-busy naming why, not
// internal, and nothing is logged to the session.
func TestSessionPromptOfASessionLeasedElsewhereIsAgentBusy(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	rt, _ := openRuntime(t, root)
	_, err := rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: "top"}})
	require.NoError(t, err)
	require.NoError(t, rt.Close(ctx))
	elsewhere, err := session.OpenJSONL(root)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, elsewhere.Close()) })
	_, err = elsewhere.Acquire(ctx, "top")
	require.NoError(t, err)
	before, err := elsewhere.Inspect(ctx, "top")
	require.NoError(t, err)

	rt, b := openRuntime(t, root)
	got := rawCall(t, newTestHandler(t, b), "session.prompt", `{"sessionId":"top","mode":"queue","content":[]}`)
	require.Equal(t, `{"type":"server-response","rpcId":"r","result":{"ok":false,"error":{"code":"agent-busy",`+
		`"message":"session \"top\" is running in another process",`+
		`"details":{"reason":"its lease is held by another process; retry once that process releases it or the lease expires"}}}}`, got)
	require.Nil(t, rt.Registry().Get("top"))
	after, err := elsewhere.Inspect(ctx, "top")
	require.NoError(t, err)
	require.Equal(t, before.Events, after.Events)
}

// TestRuntimeBackendCreateSessionIsTheOriginalsEnsureSession: a session is
// created under the given id with its cwd (the directory made when
// missing); a requested id that is live or stored is adopted (resumed) when
// its cwd is the requested one, else a sessionConflict.
func TestRuntimeBackendCreateSessionIsTheOriginalsEnsureSession(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	rt, _ := openRuntime(t, root)
	a, b2 := filepath.Join(root, "a"), filepath.Join(root, "b", "deep")
	_, err := rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: "stored", Cwd: a}})
	require.NoError(t, err)
	_, err = rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: "no-cwd"}})
	require.NoError(t, err)
	require.NoError(t, rt.Close(ctx))

	rt, b := openRuntime(t, root)
	created, err := b.CreateSession(ctx, createRequest{ID: "fresh", Cwd: b2})
	require.NoError(t, err)
	require.Equal(t, "fresh", created.ID)
	require.Equal(t, b2, created.Cwd)
	require.Equal(t, b2, rt.Registry().Get("fresh").Header().Cwd)
	require.DirExists(t, b2)

	adopted, err := b.CreateSession(ctx, createRequest{ID: "fresh", Cwd: b2, Requested: true})
	require.NoError(t, err, "a live id is adopted")
	require.Equal(t, b2, adopted.Cwd)
	_, err = b.CreateSession(ctx, createRequest{ID: "fresh", Cwd: a, Requested: true})
	require.Equal(t, &sessionConflict{SessionID: "fresh", RequestedCwd: a, ExistingCwd: b2, HasExisting: true}, err,
		"the original's ensureSession checks the cwd of the agent it returns, a live one too")

	_, err = b.CreateSession(ctx, createRequest{ID: "stored", Cwd: b2, Requested: true})
	require.Equal(t, &sessionConflict{SessionID: "stored", RequestedCwd: b2, ExistingCwd: a, HasExisting: true}, err)
	require.Nil(t, rt.Registry().Get("stored"))
	_, err = b.CreateSession(ctx, createRequest{ID: "no-cwd", Cwd: b2, Requested: true})
	require.Equal(t, &sessionConflict{SessionID: "no-cwd", RequestedCwd: b2}, err)

	resumed, err := b.CreateSession(ctx, createRequest{ID: "stored", Cwd: a, Requested: true})
	require.NoError(t, err)
	require.True(t, resumed.Live)
	require.NotNil(t, rt.Registry().Get("stored"), "a stored id with the same cwd is resumed")
}

// TestRuntimeBackendFencesSubagentSessionsFromGenericRoutes: explicit-id session.create and session.prompt answer
// agent-busy for a subagent session (origin "subagent", or a child
// whose own suffix holds its descriptor), live or cold, and for a live
// agent its exact live parent owns (a one-shot child), before any cwd
// conflict and without resuming it; a fork whose seed merely inherits an
// ancestor's descriptor is an ordinary session, and so is a child that was
// resumed by an ordinary route (no parent owns it).
func TestRuntimeBackendFencesSubagentSessionsFromGenericRoutes(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	a, elsewhere := filepath.Join(root, "a"), filepath.Join(root, "elsewhere")
	descriptorEvent := session.Event{Type: vocab.TypeSubagentDescriptor, Data: json.RawMessage(`{"version":1,"provider":"spawn","label":"x"}`)}
	one := 1
	rt, _ := openRuntime(t, root)
	for _, spec := range []parent.CreateSpec{
		{Header: session.Header{ID: "top", Cwd: a}},
		{Header: session.Header{ID: "kid", Cwd: a, ParentSession: "top", Origin: "subagent"}},
		{Header: session.Header{ID: "seed-era", Cwd: a, ParentSession: "top"}, Seed: []session.Event{descriptorEvent}},
		{Header: session.Header{ID: "fork", Cwd: a, ParentSession: "top", SeedLength: &one}, Seed: []session.Event{descriptorEvent}},
	} {
		_, err := rt.StartAgent(ctx, spec)
		require.NoError(t, err, spec.Header.ID)
	}
	require.NoError(t, rt.Close(ctx))

	rt, b := openRuntime(t, root)
	_, err := rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: "live-kid", Cwd: a, ParentSession: "top", Origin: "subagent"}})
	require.NoError(t, err)
	_, err = rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: "live-seed-era", Cwd: a, ParentSession: "top"},
		Seed: []session.Event{descriptorEvent}})
	require.NoError(t, err)
	top, err := rt.ResumeAgent(ctx, "top", parent.Spec{})
	require.NoError(t, err)
	_, err = rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: "one-shot", Cwd: a, ParentSession: "top"},
		Spec: parent.Spec{Owner: top}})
	require.NoError(t, err)
	for _, id := range []string{"kid", "seed-era", "live-kid", "live-seed-era", "one-shot"} {
		for _, cwd := range []string{a, elsewhere} {
			_, err := b.CreateSession(ctx, createRequest{ID: id, Cwd: cwd, Requested: true})
			require.ErrorIs(t, err, codeAgentBusy, "create %s in %s", id, cwd)
		}
		_, err := b.PromptSession(ctx, id, event.Text("reply no"), userSource)
		require.ErrorIs(t, err, codeAgentBusy, "prompt %s", id)
		require.ErrorIs(t, b.CancelSession(ctx, id), codeAgentBusy, "cancel %s", id)
	}
	require.Nil(t, rt.Registry().Get("kid"), "a fenced child is never resumed")
	require.Nil(t, rt.Registry().Get("seed-era"), "a fenced child is never resumed")

	for range 2 { // cold, then live with its parent live
		_, err = b.PromptSession(ctx, "fork", event.Text("reply ordinary"), userSource)
		require.NoError(t, err, "an inherited ancestor descriptor does not classify")
		require.NotNil(t, rt.Registry().Get("fork"))
		require.NoError(t, rt.Registry().Get("fork").Activation().WhenIdle(ctx))
	}

	// A live owned child is fenced only while that exact parent is live.
	require.NoError(t, top.Dispose(ctx))
	_, err = rt.ResumeAgent(ctx, "top", parent.Spec{})
	require.NoError(t, err)
	_, err = b.PromptSession(ctx, "one-shot", event.Text("reply mine now"), userSource)
	require.NoError(t, err, "the parent that owned it is gone; its successor does not own it")
	require.NoError(t, rt.Registry().Get("one-shot").Activation().WhenIdle(ctx))
}

// noticeLog records notices for one session: the session registry's
// (added, events, removed) and the agent bus's status edges apart, since
// the two sources are ordered each on its own.
type noticeLog struct {
	mu       sync.Mutex
	id       string
	notices  []string
	statuses []string
}

func (l *noticeLog) observe(n notice) {
	if n.SessionID != l.id {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch n.Kind {
	case sessionAdded:
		l.notices = append(l.notices, "added")
	case sessionStatus:
		if n.Running {
			l.statuses = append(l.statuses, "running")
		} else {
			l.statuses = append(l.statuses, "idle")
		}
	case sessionEvent:
		l.notices = append(l.notices, n.Event.Type)
	case sessionRemoved:
		l.notices = append(l.notices, "removed")
	}
}

func TestRuntimeBackendNoticesFollowTheAgentLifecycle(t *testing.T) {
	ctx := context.Background()
	rt, b := openRuntime(t, t.TempDir())
	log := &noticeLog{id: "a"}
	cancel := b.Subscribe(log.observe)
	defer cancel()

	h, err := rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: "a"}})
	require.NoError(t, err)
	converse(t, h, "reply hi")
	require.NoError(t, h.Dispose(ctx))

	log.mu.Lock()
	defer log.mu.Unlock()
	require.Equal(t, []string{
		"added", "turn/start", "user/message", "step/start", "assistant/message", "step/end", "turn/end", "removed",
	}, log.notices)
	require.Equal(t, []string{"running", "idle"}, log.statuses)
}

package host

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/stretchr/testify/require"
)

// attachingBackend is the fake backend with the attachmentSource extension:
// attach records what a session holds when it becomes live, detach forgets
// it, as a runtime's live registry would.
type attachingBackend struct {
	*fakeBackend
	mu       sync.Mutex
	attached []attachment
}

func newAttachingBackend() *attachingBackend {
	return &attachingBackend{fakeBackend: newFakeBackend()}
}

func (b *attachingBackend) attach(a attachment) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.attached = append(b.attached, a)
}

func (b *attachingBackend) detach(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.attached = slices.DeleteFunc(b.attached, func(a attachment) bool { return a.SessionID == id })
}

func (b *attachingBackend) Attachment(id string) (attachment, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.IndexFunc(b.attached, func(a attachment) bool { return a.SessionID == id })
	if i < 0 {
		return attachment{}, false
	}
	return b.attached[i], true
}

func (b *attachingBackend) Attachments() []attachment {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.attached)
}

// requireSubscribed reads the next frame and requires it to be exactly
// session/subscribed {sessionId: id, lastSeq}, key order included.
func requireSubscribed(t *testing.T, r *bufio.Reader, id string, lastSeq int64) {
	t.Helper()
	f := readFrame(t, r)
	require.Equal(t, "server-request", f.Type)
	require.Equal(t, "session/subscribed", f.Method)
	want, err := json.Marshal(map[string]any{"type": "session/subscribed", "sessionId": id, "lastSeq": lastSeq})
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(f.Payload))
	require.Equal(t, `{"type":"session/subscribed","sessionId":"`+id+`","lastSeq":`+jsonInt(lastSeq)+`}`, string(f.Payload))
}

func jsonInt(n int64) string {
	data, _ := json.Marshal(n)
	return string(data)
}

// streamPayload is the part of a mux frame's payload the tests look at.
type streamPayload struct {
	SessionID string    `json:"sessionId"`
	LastSeq   int64     `json:"lastSeq"`
	Event     wireEvent `json:"event"`
}

// nextFrameWhere reads frames until one satisfies match and returns it
// with every frame read before it; the stream is cut after 30 s.
func nextFrameWhere(t *testing.T, r *bufio.Reader, stop func(), match func(frame, streamPayload) bool) (frame, streamPayload, []frame) {
	t.Helper()
	timer := time.AfterFunc(30*time.Second, stop)
	defer timer.Stop()
	var before []frame
	for {
		f := readFrame(t, r)
		var p streamPayload
		require.NoError(t, json.Unmarshal(f.Payload, &p))
		if match(f, p) {
			return f, p, before
		}
		before = append(before, f)
	}
}

func TestMuxOpensWithOneSubscribedFramePerAttachedSession(t *testing.T) {
	b := newAttachingBackend()
	b.attach(attachment{SessionID: "before-handler", LastSeq: 4})
	srv := serveTestHandler(t, b)

	b.attach(attachment{SessionID: "p1", LastSeq: -1, Blank: true})
	b.emit(notice{Kind: sessionAdded, SessionID: "p1"})
	b.attach(attachment{SessionID: "c1", LastSeq: 1, Blank: true})
	b.emit(notice{Kind: sessionAdded, SessionID: "c1", ParentSessionID: "p1"},
		notice{Kind: sessionEvent, SessionID: "c1", Event: plain(2, "turn/start")},
		notice{Kind: sessionEvent, SessionID: "p1", Event: plain(0, "turn/start")})

	mux, stopMux := openStreamAt(t, srv.URL, "/api/events.mux")
	defer stopMux()
	requireSubscribed(t, mux, "before-handler", 4)
	requireSubscribed(t, mux, "p1", 0)
	requireSubscribed(t, mux, "c1", 2)

	// A session that becomes attached later is subscribed on the open
	// stream before any of its events; a released one is not subscribed
	// by a later stream.
	b.attach(attachment{SessionID: "c2", LastSeq: 3})
	b.emit(notice{Kind: sessionAdded, SessionID: "c2", ParentSessionID: "p1"},
		notice{Kind: sessionEvent, SessionID: "c2", Event: plain(4, "turn/start")})
	requireSubscribed(t, mux, "c2", 3)
	f := readFrame(t, mux)
	require.Equal(t, "session/event", f.Method)

	b.detach("c1")
	b.emit(notice{Kind: sessionRemoved, SessionID: "c1"},
		notice{Kind: sessionEvent, SessionID: "c1", Event: plain(3, "turn/end")})
	later, stopLater := openStreamAt(t, srv.URL, "/api/events.mux")
	defer stopLater()
	requireSubscribed(t, later, "before-handler", 4)
	requireSubscribed(t, later, "p1", 0)
	requireSubscribed(t, later, "c2", 4)
	b.emit(notice{Kind: sessionEvent, SessionID: "p1", Event: plain(1, "turn/end")})
	require.Equal(t, "session/event", readFrame(t, later).Method)
}

func TestSubscribedFramesStayOffTheHostAndPageStreams(t *testing.T) {
	b := newAttachingBackend()
	b.attach(attachment{SessionID: "p1", LastSeq: 2})
	srv := serveTestHandler(t, b)
	hostStream, stopHost := openStreamAt(t, srv.URL, "/api/events.host")
	defer stopHost()
	page, stopPage := openStream(t, srv.URL)
	defer stopPage()

	b.attach(attachment{SessionID: "c1", LastSeq: 0})
	b.emit(notice{Kind: sessionAdded, SessionID: "c1", ParentSessionID: "p1"},
		notice{Kind: sessionEvent, SessionID: "c1", Event: plain(1, "turn/start")})
	require.Equal(t, "host/session-added", readFrame(t, hostStream).Method)
	require.Equal(t, "host/session-added", readFrame(t, page).Method)
	require.Equal(t, "session/event", readFrame(t, page).Method)
}

func TestMuxSubscribesLiveRuntimeSessionsCreatedSpawnedAndColdResumed(t *testing.T) {
	s := newRuntimeStack(t)
	ctx := context.Background()
	p := started(t, s.rt, "")
	mux, stopMux := openStreamAt(t, s.url, "/api/events.mux")
	defer stopMux()
	requireSubscribed(t, mux, p, lastSeq(t, s.rt, p))

	// A spawned child is subscribed when it is published, before any of
	// its events, and its first event follows lastSeq.
	converse(t, s.rt, p, "spawn worker: reply working")
	children := s.settled(t, p, 1)
	child := children[0].ID
	_, sub, before := nextFrameWhere(t, mux, stopMux, func(f frame, pl streamPayload) bool {
		return f.Method == "session/subscribed" && pl.SessionID == child
	})
	for _, f := range before {
		var pl streamPayload
		require.NoError(t, json.Unmarshal(f.Payload, &pl))
		require.NotEqual(t, child, pl.SessionID, "no child frame before its subscription")
	}
	require.GreaterOrEqual(t, sub.LastSeq, int64(0))
	_, first, _ := nextFrameWhere(t, mux, stopMux, func(f frame, pl streamPayload) bool {
		return f.Method == "session/event" && pl.SessionID == child
	})
	require.Equal(t, sub.LastSeq+1, first.Event.Seq)

	// A cold child re-materialised by a follow-up is subscribed again,
	// with its stored log (and the resume's end-seed) as the baseline.
	stored, err := s.backend.ReadSession(ctx, child)
	require.NoError(t, err)
	resumed := callRPC(t, s.recorder, "subagent.prompt", map[string]any{"parentSessionId": p, "childSessionId": child,
		"content": []any{map[string]any{"type": "text", "text": "reply again"}}})
	require.True(t, resumed.Result.OK, string(resumed.Result.Value))
	_, again, _ := nextFrameWhere(t, mux, stopMux, func(f frame, pl streamPayload) bool {
		return f.Method == "session/subscribed" && pl.SessionID == child
	})
	require.GreaterOrEqual(t, again.LastSeq, stored.Events[len(stored.Events)-1].Seq)
	_, next, _ := nextFrameWhere(t, mux, stopMux, func(f frame, pl streamPayload) bool {
		return f.Method == "session/event" && pl.SessionID == child
	})
	require.Equal(t, again.LastSeq+1, next.Event.Seq)
	s.settled(t, p, 1)
}

func TestMuxSubscribesSessionsLiveBeforeTheHandler(t *testing.T) {
	s := newRuntimeStack(t)
	p := started(t, s.rt, "")
	converse(t, s.rt, p, "reply hello")
	h := newHandler(s.backend, Options{})
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	mux, stopMux := openStreamAt(t, srv.URL, "/api/events.mux")
	defer stopMux()
	requireSubscribed(t, mux, p, lastSeq(t, s.rt, p))
	id, err := s.rt.PromptSession(context.Background(), p, event.Text("reply more"), userSource)
	require.NoError(t, err)
	require.Equal(t, wantQueue(p, wantItem(id, "reply more")), string(readFrame(t, mux).Payload))
	require.Equal(t, wantQueue(p), string(readFrame(t, mux).Payload), "claimed before its turn logs anything")
	f := readFrame(t, mux)
	require.Equal(t, "session/event", f.Method)
}

func TestSessionAddedBlankMeansNoTurnHasStarted(t *testing.T) {
	s := newRuntimeStack(t)
	hostStream, stopHost := openStreamAt(t, s.url, "/api/events.host")
	defer stopHost()
	page, stopPage := openStream(t, s.url)
	defer stopPage()
	added := func(r *bufio.Reader, stop func(), id string) string {
		t.Helper()
		f, _, _ := nextFrameWhere(t, r, stop, func(f frame, pl streamPayload) bool {
			return f.Method == "host/session-added" && (id == "" || pl.SessionID == id)
		})
		return string(f.Payload)
	}

	p := started(t, s.rt, "")
	for _, r := range []struct {
		r    *bufio.Reader
		stop func()
	}{{hostStream, stopHost}, {page, stopPage}} {
		require.JSONEq(t, `{"type":"host/session-added","sessionId":"`+p+`","blank":true}`, added(r.r, r.stop, p))
	}

	// A new subagent child already holds its descriptor and end-seed when
	// it is published, but no turn has started: blank.
	converse(t, s.rt, p, "spawn worker: reply working")
	child := s.settled(t, p, 1)[0].ID
	want := `{"type":"host/session-added","sessionId":"` + child + `","blank":true,"parentSessionId":"` + p + `"}`
	require.JSONEq(t, want, added(hostStream, stopHost, child))
	require.JSONEq(t, want, added(page, stopPage, child))

	// A cold child resumed by a follow-up holds its earlier turns: not blank.
	resumed := callRPC(t, s.recorder, "subagent.prompt", map[string]any{"parentSessionId": p, "childSessionId": child,
		"content": []any{map[string]any{"type": "text", "text": "reply again"}}})
	require.True(t, resumed.Result.OK, string(resumed.Result.Value))
	require.JSONEq(t, `{"type":"host/session-added","sessionId":"`+child+`","blank":false,"parentSessionId":"`+p+
		`"}`, added(hostStream, stopHost, child))
	s.settled(t, p, 1)
}

func TestSessionAddedBlankComesFromTheAttachment(t *testing.T) {
	b := newAttachingBackend()
	srv := serveTestHandler(t, b)
	hostStream, stopHost := openStreamAt(t, srv.URL, "/api/events.host")
	defer stopHost()

	b.attach(attachment{SessionID: "c1", LastSeq: 1, Blank: true})
	b.attach(attachment{SessionID: "c2", LastSeq: 9, Blank: false})
	b.emit(notice{Kind: sessionAdded, SessionID: "c1", Blank: false}, notice{Kind: sessionAdded, SessionID: "c2", Blank: true},
		notice{Kind: sessionAdded, SessionID: "unknown", Blank: true})
	require.JSONEq(t, `{"type":"host/session-added","sessionId":"c1","blank":true}`, string(readFrame(t, hostStream).Payload))
	require.JSONEq(t, `{"type":"host/session-added","sessionId":"c2","blank":false}`, string(readFrame(t, hostStream).Payload))
	require.JSONEq(t, `{"type":"host/session-added","sessionId":"unknown","blank":true}`, string(readFrame(t, hostStream).Payload))
}

// TestFailedTurnSendsAgentErrorOnTheHostStream: with the real runtime, a
// turn that fails (an error or a panic) gives host/agent-error with the
// turn/end reason's message between the running and the idle status.
func TestFailedTurnSendsAgentErrorOnTheHostStream(t *testing.T) {
	s := newRuntimeStack(t)
	hostStream, stopHost := openStreamAt(t, s.url, "/api/events.host")
	defer stopHost()
	p := started(t, s.rt, "")
	for _, tc := range []struct{ text, message string }{
		{"fail boom", "boom"},
		{"panic", "panic: scripted: panic command"},
	} {
		_, err := s.rt.PromptSession(context.Background(), p, event.Text(tc.text), userSource)
		require.NoError(t, err)
		_, _, _ = nextFrameWhere(t, hostStream, stopHost, func(f frame, pl streamPayload) bool {
			return f.Method == "host/session-status" && pl.SessionID == p && string(f.Payload) ==
				`{"type":"host/session-status","sessionId":"`+p+`","running":true}`
		})
		f := readFrame(t, hostStream)
		require.Equal(t, `{"type":"host/agent-error","sessionId":"`+p+`","message":"`+tc.message+`"}`, string(f.Payload))
		f = readFrame(t, hostStream)
		require.Equal(t, `{"type":"host/session-status","sessionId":"`+p+`","running":false}`, string(f.Payload))
	}
}

package host

import (
	"context"
	"testing"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/stretchr/testify/require"
)

// queued is the Notice of an accepted message id with text from the user.
func queued(session, id, text string) notice {
	return notice{Kind: queueEnqueued, SessionID: session, MessageID: id,
		Message: event.UserMessage{ID: id, Role: "user", Content: event.Text(text), Source: event.Source{Kind: "user"}}}
}

// wantQueue is the exact session/queue payload of session holding items,
// each {id, message} given as its already encoded JSON.
func wantQueue(session string, items ...string) string {
	body := `{"type":"session/queue","sessionId":"` + session + `","items":[`
	for i, item := range items {
		if i > 0 {
			body += ","
		}
		body += item
	}
	return body + "]}"
}

func wantItem(id, text string) string {
	return `{"id":"` + id + `","message":{"content":[{"type":"text","text":"` + text + `"}],"source":{"kind":"user"},"role":"user","id":"` + id + `"}}`
}

// TestMuxCarriesTheQueueMirror is the original's publishQueue: each queued
// message's acceptance and each claim or discard sends the session's whole
// queue {id, message} in FIFO order on the mux stream (never the host
// stream), and a new mux stream opens with the queue of every session
// holding one, in the order those queues began.
func TestMuxCarriesTheQueueMirror(t *testing.T) {
	b := newFakeBackend()
	srv := serveTestHandler(t, b)
	mux, stopMux := openStreamAt(t, srv.URL, "/api/events.mux")
	defer stopMux()
	hostStream, stopHost := openStreamAt(t, srv.URL, "/api/events.host")
	defer stopHost()

	b.emit(queued("p1", "m1", "a"))
	require.Equal(t, wantQueue("p1", wantItem("m1", "a")), string(readFrame(t, mux).Payload))
	b.emit(queued("p2", "n1", "x"), queued("p1", "m2", "b"))
	require.Equal(t, wantQueue("p2", wantItem("n1", "x")), string(readFrame(t, mux).Payload))
	require.Equal(t, wantQueue("p1", wantItem("m1", "a"), wantItem("m2", "b")), string(readFrame(t, mux).Payload))
	b.emit(notice{Kind: queueLeft, SessionID: "p1", MessageID: "m1"})
	require.Equal(t, wantQueue("p1", wantItem("m2", "b")), string(readFrame(t, mux).Payload))

	later, stopLater := openStreamAt(t, srv.URL, "/api/events.mux")
	defer stopLater()
	require.Equal(t, wantQueue("p1", wantItem("m2", "b")), string(readFrame(t, later).Payload))
	require.Equal(t, wantQueue("p2", wantItem("n1", "x")), string(readFrame(t, later).Payload))

	// One cancel's discards (More on all but the last) send one frame, even
	// when the last of them is unknown to the mirror.
	b.emit(queued("p1", "m3", "c"),
		notice{Kind: queueLeft, SessionID: "p1", MessageID: "m2", More: true},
		notice{Kind: queueLeft, SessionID: "p1", MessageID: "m3", More: true},
		notice{Kind: queueLeft, SessionID: "p1", MessageID: "ghost"})
	require.Equal(t, wantQueue("p1", wantItem("m2", "b"), wantItem("m3", "c")), string(readFrame(t, mux).Payload))
	require.Equal(t, wantQueue("p1"), string(readFrame(t, mux).Payload), "an emptied queue is sent once, empty")
	require.Equal(t, wantQueue("p1", wantItem("m2", "b"), wantItem("m3", "c")), string(readFrame(t, later).Payload))
	require.Equal(t, wantQueue("p1"), string(readFrame(t, later).Payload))

	b.emit(notice{Kind: sessionStatus, SessionID: "p1", Running: true})
	require.Equal(t, "host/session-status", readFrame(t, hostStream).Method, "no queue frame reached the host stream")
	b.emit(notice{Kind: queueLeft, SessionID: "p2", MessageID: "n1"})
	require.Equal(t, wantQueue("p2"), string(readFrame(t, mux).Payload))
	b.emit(queued("p3", "q1", "z"))
	require.Equal(t, wantQueue("p3", wantItem("q1", "z")), string(readFrame(t, mux).Payload))
	b.emit(notice{Kind: sessionRemoved, SessionID: "p3"}) // its queue goes with it, unannounced
	last, stopLast := openStreamAt(t, srv.URL, "/api/events.mux")
	defer stopLast()
	b.emit(notice{Kind: sessionEvent, SessionID: "p1", Event: plain(0, "turn/start")})
	require.Equal(t, "session/event", readFrame(t, last).Method, "empty and removed sessions' queues are not replayed")
}

// TestRuntimeQueueFramesFollowTheInbox: on the runtime backend each
// follow-up is shown queued from its acceptance until a turn claims it.
func TestRuntimeQueueFramesFollowTheInbox(t *testing.T) {
	s := newRuntimeStack(t)
	ctx := context.Background()
	id := started(t, s.rt, "")
	followup := func(text string) string {
		t.Helper()
		messageID, err := s.rt.PromptSession(ctx, id, event.Text(text), userSource)
		require.NoError(t, err)
		return messageID
	}
	mux, stopMux := openStreamAt(t, s.url, "/api/events.mux")
	defer stopMux()
	nextQueue := func() string {
		f, _, _ := nextFrameWhere(t, mux, stopMux, func(f frame, _ streamPayload) bool { return f.Method == "session/queue" })
		return string(f.Payload)
	}

	first := followup("sleep 50ms")
	require.Equal(t, wantQueue(id, wantItem(first, "sleep 50ms")), nextQueue())
	require.Equal(t, wantQueue(id), nextQueue(), "claimed by its turn")
	second := followup("reply second")
	require.Equal(t, wantQueue(id, wantItem(second, "reply second")), nextQueue())
	require.Equal(t, wantQueue(id), nextQueue())
	waitIdle(t, s.rt, id, "reply second")

	// A cancel that discards several queued messages sends one frame.
	followup("sleep 1h")
	nextQueue()
	nextQueue() // claimed
	var queuedItems []string
	for _, text := range []string{"reply b", "reply c", "reply d"} {
		queuedItems = append(queuedItems, wantItem(followup(text), text))
		require.Equal(t, wantQueue(id, queuedItems...), nextQueue())
	}
	require.NoError(t, s.rt.CancelTurn(ctx, id, false))
	require.Equal(t, wantQueue(id), nextQueue())
	waitIdle(t, s.rt, id, "sleep 1h (cancelled)")
}

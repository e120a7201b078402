package host

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dsh-actors/dsh-actors/session"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// frame is one decoded SSE data block.
type frame struct {
	Type    string          `json:"type"`
	RPCID   string          `json:"rpcId"`
	Method  string          `json:"method"`
	Payload json.RawMessage `json:"payload"`
}

// openStream connects to /events (the page stream) and returns a reader positioned after
// the ": connected" comment.
func openStream(t *testing.T, baseURL string) (*bufio.Reader, func()) {
	t.Helper()
	return openStreamAt(t, baseURL, "/events")
}

// serveTestHandler serves a test handler over b until the test ends.
func serveTestHandler(t *testing.T, b rpcBackend) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(newTestHandler(t, b))
	t.Cleanup(srv.Close)
	return srv
}

// openStreamAt connects to the event stream at path (/events,
// /api/events.host or /api/events.mux) and returns a reader positioned
// after the ": connected" comment.
func openStreamAt(t *testing.T, baseURL, path string) (*bufio.Reader, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+path, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	require.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
	r := bufio.NewReader(resp.Body)
	require.Equal(t, ": connected\n", readLine(t, r))
	require.Equal(t, "\n", readLine(t, r))
	return r, func() { cancel(); resp.Body.Close() }
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	return line
}

func readFrame(t *testing.T, r *bufio.Reader) frame {
	t.Helper()
	line := readLine(t, r)
	require.True(t, strings.HasPrefix(line, "data: "), line)
	require.Equal(t, "\n", readLine(t, r))
	var f frame
	require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &f))
	return f
}

func TestEventStreamDeliversFramesInOrder(t *testing.T) {
	b := newFakeBackend()
	srv := serveTestHandler(t, b)
	r, stop := openStream(t, srv.URL)
	defer stop()

	event := message(3, "assistant/message", "done")
	b.emit(
		notice{Kind: sessionAdded, SessionID: "c1", ParentSessionID: "p1", Blank: true},
		notice{Kind: sessionStatus, SessionID: "c1", Running: true},
		notice{Kind: sessionEvent, SessionID: "c1", Event: event},
		notice{Kind: sessionStatus, SessionID: "c1", Running: false},
		notice{Kind: sessionRemoved, SessionID: "c1"},
	)
	want := []struct{ method, payload string }{
		{"host/session-added", `{"type":"host/session-added","sessionId":"c1","blank":true,"parentSessionId":"p1"}`},
		{"host/session-status", `{"type":"host/session-status","sessionId":"c1","running":true}`},
		{"session/event", `{"type":"session/event","sessionId":"c1","event":{"type":"assistant/message","seq":3,"time":1003,
			"surfaceOp":"append","data":{"content":[{"type":"text","text":"done"}]}}}`},
		{"host/session-status", `{"type":"host/session-status","sessionId":"c1","running":false}`},
		{"host/session-removed", `{"type":"host/session-removed","sessionId":"c1"}`},
	}
	seen := map[string]bool{}
	for _, w := range want {
		f := readFrame(t, r)
		require.Equal(t, "server-request", f.Type)
		require.Equal(t, w.method, f.Method)
		require.JSONEq(t, w.payload, string(f.Payload))
		_, err := uuid.Parse(f.RPCID)
		require.NoError(t, err)
		require.False(t, seen[f.RPCID], "a fresh rpcId per push")
		seen[f.RPCID] = true
	}
}

func TestEventStreamFansOutToEveryClient(t *testing.T) {
	b := newFakeBackend()
	srv := serveTestHandler(t, b)
	first, stopFirst := openStream(t, srv.URL)
	defer stopFirst()
	second, stopSecond := openStream(t, srv.URL)
	defer stopSecond()

	for seq := range int64(20) {
		b.emit(notice{Kind: sessionEvent, SessionID: "s", Event: plain(seq, "turn/start")})
	}
	for _, r := range []*bufio.Reader{first, second} {
		for seq := range int64(20) {
			var p struct{ Event wireEvent }
			require.NoError(t, json.Unmarshal(readFrame(t, r).Payload, &p))
			require.Equal(t, seq, p.Event.Seq)
		}
	}
}

func TestCloseEndsOpenStreams(t *testing.T) {
	h := newHandler(newFakeBackend(), Options{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	r, stop := openStream(t, srv.URL)
	defer stop()
	h.Close()
	_, err := r.ReadString('\n')
	require.ErrorIs(t, err, io.EOF)
	h.Close()

	resp, err := srv.Client().Get(srv.URL + "/events")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
}

func TestSlowStreamOverflowsWithOneStreamErrorFrame(t *testing.T) {
	hb := newHub(queueLimit{frames: 2, bytes: 1 << 20}, nil)
	s := hb.join(streamAll)
	for seq := range int64(5) {
		hb.publish(notice{Kind: sessionEvent, SessionID: "s", Event: plain(seq, "turn/start")})
	}
	frames, end := hb.take(s)
	require.True(t, end)
	require.Len(t, frames, 3)
	require.Contains(t, string(frames[2]), `"method":"stream/error"`)
	require.Contains(t, string(frames[2]), `"code":"internal"`)
}

func TestHeartbeatKeepsAnIdleStreamAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(newFakeBackend(), Options{Heartbeat: 15 * time.Second})
		defer h.Close()
		ctx, cancel := context.WithCancel(context.Background())
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			req := httptest.NewRequestWithContext(ctx, http.MethodGet, "http://localhost/events", nil)
			req.RemoteAddr = "127.0.0.1:50000" // a page on this machine
			h.ServeHTTP(rec, req)
		}()
		time.Sleep(31 * time.Second)
		synctest.Wait()
		cancel()
		<-done
		require.Equal(t, ": connected\n\n: ping\n\n: ping\n\n", rec.Body.String())
	})
}

func TestUndecodableEventIsSkipped(t *testing.T) {
	hb := newHub(queueLimit{frames: 8, bytes: 1 << 20}, nil)
	s := hb.join(streamAll)
	hb.publish(notice{Kind: sessionEvent, SessionID: "s", Event: session.Event{Type: "x", Data: json.RawMessage(`{bad`)}})
	hb.publish(notice{Kind: noticeKind(99), SessionID: "s"})
	frames, end := hb.take(s)
	require.Empty(t, frames)
	require.False(t, end)
}

func TestContractStreamsSplitHostAndSessionFrames(t *testing.T) {
	b := newFakeBackend()
	srv := serveTestHandler(t, b)
	hostStream, stopHost := openStreamAt(t, srv.URL, "/api/events.host")
	defer stopHost()
	mux, stopMux := openStreamAt(t, srv.URL, "/api/events.mux")
	defer stopMux()
	all, stopAll := openStream(t, srv.URL)
	defer stopAll()

	b.emit(
		notice{Kind: sessionAdded, SessionID: "c1", ParentSessionID: "p1", Blank: true},
		notice{Kind: sessionStatus, SessionID: "c1", Running: true},
		notice{Kind: sessionEvent, SessionID: "c1", Event: plain(0, "turn/start")},
		notice{Kind: sessionStatus, SessionID: "c1", Running: false},
		notice{Kind: sessionEvent, SessionID: "c1", Event: plain(1, "turn/end")},
		notice{Kind: sessionRemoved, SessionID: "c1"},
		notice{Kind: sessionEvent, SessionID: "c2", Event: plain(7, "turn/start")},
		notice{Kind: sessionStatus, SessionID: "c2", Running: true},
	)
	methods := func(r *bufio.Reader, n int) []string {
		out := make([]string, n)
		for i := range out {
			f := readFrame(t, r)
			require.Equal(t, "server-request", f.Type)
			out[i] = f.Method
		}
		return out
	}
	require.Equal(t, []string{"host/session-added", "host/session-status", "host/session-status",
		"host/session-removed", "host/session-status"}, methods(hostStream, 5))
	require.Equal(t, []string{"session/event", "session/event", "session/event"}, methods(mux, 3))
	require.Equal(t, []string{"host/session-added", "host/session-status", "session/event", "host/session-status",
		"session/event", "host/session-removed", "session/event", "host/session-status"}, methods(all, 8))
}

func TestContractStreamsSitBehindTheTrustFence(t *testing.T) {
	h := newTestHandler(t, newFakeBackend())
	for _, path := range []string{"/api/events.host", "/api/events.mux"} {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Host = "evil.example:7410"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusForbidden, rec.Code, path)
		require.Equal(t, "forbidden", rec.Body.String())

		req = httptest.NewRequest(http.MethodGet, path, nil)
		req.Host, req.RemoteAddr = "127.0.0.1:7410", "127.0.0.1:50000"
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusForbidden, rec.Code, path)
	}
}

// TestAgentErrorPrecedesTheFailedTurnEnd: a turn ending in error gives the
// host stream host/agent-error {type, sessionId, message} (message is the error chain the turn/end reason
// holds). The original emits agent/error from settle(), before turn/end is
// appended and before the idle status, so the frame comes right before the
// failed turn/end's session/event. It is a host frame: not on the mux.
func TestAgentErrorPrecedesTheFailedTurnEnd(t *testing.T) {
	b := newFakeBackend()
	srv := serveTestHandler(t, b)
	all, stopAll := openStream(t, srv.URL)
	defer stopAll()
	hostStream, stopHost := openStreamAt(t, srv.URL, "/api/events.host")
	defer stopHost()

	failed := session.Event{Type: "turn/end", Seq: 3, Time: 1003,
		Data: json.RawMessage(`{"turn":1,"reason":{"kind":"error","step":1,"message":"boom: \"x\" </b>","code":"E_X"}}`)}
	completed := session.Event{Type: "turn/end", Seq: 6, Time: 1006, Data: json.RawMessage(`{"turn":2,"reason":{"kind":"completed"}}`)}
	b.emit(
		notice{Kind: sessionStatus, SessionID: "s1", Running: true},
		notice{Kind: sessionEvent, SessionID: "s1", Event: failed},
		notice{Kind: sessionEvent, SessionID: "s1", Event: completed},
		notice{Kind: sessionStatus, SessionID: "s1", Running: false},
	)
	agentError := `{"type":"host/agent-error","sessionId":"s1","message":"boom: \"x\" </b>"}`
	want := []struct{ method, payload string }{
		{"host/session-status", `{"type":"host/session-status","sessionId":"s1","running":true}`},
		{"host/agent-error", agentError},
		{"session/event", ""},
		{"session/event", ""},
		{"host/session-status", `{"type":"host/session-status","sessionId":"s1","running":false}`},
	}
	for _, w := range want {
		f := readFrame(t, all)
		require.Equal(t, w.method, f.Method)
		if w.payload != "" {
			require.Equal(t, w.payload, string(f.Payload))
		}
	}
	for _, w := range want {
		if w.method == "session/event" {
			continue
		}
		f := readFrame(t, hostStream)
		require.Equal(t, w.method, f.Method)
		require.Equal(t, w.payload, string(f.Payload))
	}
}

package host

import (
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/dsh-actors/dsh-actors/internal/jsjson"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/google/uuid"
)

// streamKind is which frames an event stream carries.
type streamKind uint8

// The event streams.
const (
	// streamAll is GET /events (pageStreamPath): every host/* and
	// session/event frame in one order, the page's own stream beside the
	// API.
	streamAll streamKind = iota
	// streamHost is GET /api/events.host: the host/* frames only.
	streamHost
	// streamMux is GET /api/events.mux: the session/* frames only.
	streamMux
)

// frameClass is the family of a frame, which decides the streams it goes to.
type frameClass uint8

const (
	classHost    frameClass = iota // host/session-added, -status, -removed, host/agent-error
	classSession                   // session/event
)

// carries reports whether a stream of kind k carries frames of class c.
func (k streamKind) carries(c frameClass) bool {
	switch k {
	case streamHost:
		return c == classHost
	case streamMux:
		return c == classSession
	}
	return true
}

// streamPaths maps the stream paths under /api/ to their kinds: the
// original's two.
var streamPaths = map[string]streamKind{
	"events.host": streamHost,
	"events.mux":  streamMux,
}

// pageStreamPath is the page's stream (streamAll). It sits outside /api,
// whose routes are the original's, behind the same trust fence.
const pageStreamPath = "/events"

// hub fans every Notice out to the connected event streams in one global
// order. Publishing never blocks: each stream has its own queue, and a
// stream whose queue overflows is ended (with one stream/error frame) so its
// client reconnects and re-pulls what it shows.
type hub struct {
	mu       sync.Mutex
	streams  map[*stream]struct{}
	closed   bool
	closing  chan struct{}
	maxQueue queueLimit

	source       attachmentSource            // nil: no session/subscribed frames
	attached     map[string]*attachedSession // the attached sessions, for the mux baseline (stream.go)
	attachOrder  uint64
	queues       map[string]*sessionQueue // the non-empty inbox queues (queue.go)
	queueOrder   uint64
	queueChanged map[string]bool // sessions whose queue changed since its last frame
}

// stream is one connected event stream; its fields other than kind are
// guarded by hub.mu.
type stream struct {
	kind       streamKind
	frames     [][]byte
	bytes      int // the length of frames together
	overflowed bool
	wake       chan struct{}
}

// queueLimit bounds one stream's queue: at most frames frames holding at
// most bytes bytes, though an empty queue takes any one frame.
type queueLimit struct {
	frames, bytes int
}

// fits reports whether a frame of size bytes may join s's queue.
func (l queueLimit) fits(s *stream, size int) bool {
	return len(s.frames) == 0 || (len(s.frames) < l.frames && s.bytes+size <= l.bytes)
}

func newHub(maxQueue queueLimit, source attachmentSource) *hub {
	return &hub{streams: map[*stream]struct{}{}, closing: make(chan struct{}), maxQueue: maxQueue,
		source: source, attached: map[string]*attachedSession{},
		queues: map[string]*sessionQueue{}, queueChanged: map[string]bool{}}
}

// join registers a new stream of kind, a mux stream with its
// session/subscribed baseline queued; it returns nil once the hub is
// closed.
func (h *hub) join(kind streamKind) *stream {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	s := &stream{kind: kind, wake: make(chan struct{}, 1)}
	h.streams[s] = struct{}{}
	if kind == streamMux {
		h.openMux(s)
	}
	return s
}

func (h *hub) leave(s *stream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.streams, s)
}

// close ends every stream; later joins fail.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.closing)
	}
}

// publish queues n's frame on every stream that carries it, after the
// session/subscribed frame of a session n attaches (mux streams only).
func (h *hub) publish(n notice) {
	if n.Kind == queueEnqueued || n.Kind == queueLeft {
		h.publishQueue(n)
		return
	}
	a, attached := h.attachmentOf(n)
	if attached {
		n.Blank = a.Blank
	}
	frame, class, ok := encodeFrame(n)
	agentError, failed := agentErrorOf(n)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.track(n, a, attached)
	for s := range h.streams {
		if failed && s.kind.carries(classHost) {
			h.queue(s, agentError)
		}
		if ok && s.kind.carries(class) {
			h.queue(s, frame)
		}
	}
}

// agentErrorOf renders host/agent-error {type, sessionId, message} for a
// sessionEvent notice of a turn/end whose reason is an error, or false.
// The original pushes it from the agent/error event its loop's settle()
// emits before appending that turn/end (and before the idle status), with
// message = errorChain(error), the text the turn/end reason holds: the
// {kind:"error", step, message, code?} or {kind:"error", step,
// failure:{message, code}} this runtime writes, or the {kind:"error",
// error:{message}} of other writers, all read by vocab.Reason.Text.
func agentErrorOf(n notice) ([]byte, bool) {
	if n.Kind != sessionEvent || n.Event.Type != vocab.TypeTurnEnd {
		return nil, false
	}
	end, err := vocab.DecodeAs[vocab.TurnEnd](n.Event.Type, n.Event.Data)
	if err != nil || end.Reason.Kind != vocab.ReasonError {
		return nil, false
	}
	message := end.Reason.Text()
	frame, err := sseData(frameAgentError, agentErrorFrame{Type: frameAgentError, SessionID: n.SessionID, Message: message})
	return frame, err == nil
}

// queue appends frame to s, or ends s with one stream/error frame when its
// queue cannot take it (maxQueue); h.mu is held.
func (h *hub) queue(s *stream, frame []byte) {
	if s.overflowed {
		return
	}
	if h.maxQueue.fits(s, len(frame)) {
		s.push(frame)
	} else {
		s.overflowed = true
		s.frames = append(s.frames, overflowFrame())
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// push appends frame to s's queue; hub.mu is held.
func (s *stream) push(frame []byte) {
	s.frames = append(s.frames, frame)
	s.bytes += len(frame)
}

// take hands over s's queued frames and whether the stream must end.
func (h *hub) take(s *stream) ([][]byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	frames := s.frames
	s.frames, s.bytes = nil, 0
	return frames, s.overflowed
}

// serveEvents streams the frames of kind as Server-Sent Events until the
// client goes away, the handler closes, or the stream overflows.
func (h *Handler) serveEvents(w http.ResponseWriter, r *http.Request, kind streamKind) {
	flusher, ok := w.(http.Flusher)
	s := h.hub.join(kind)
	if !ok || s == nil {
		carrierError(w, http.StatusServiceUnavailable, "event stream unavailable")
		return
	}
	defer h.hub.leave(s)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	if !writeFlush(w, flusher, []byte(": connected\n\n")) {
		return
	}
	heartbeat := time.NewTicker(h.opts.Heartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-h.hub.closing:
			return
		case <-heartbeat.C:
			if !writeFlush(w, flusher, []byte(": ping\n\n")) {
				return
			}
		case <-s.wake:
			frames, end := h.hub.take(s)
			if !writeFrames(w, flusher, frames) || end {
				return
			}
		}
	}
}

func writeFrames(w io.Writer, flusher http.Flusher, frames [][]byte) bool {
	for _, f := range frames {
		if _, err := w.Write(f); err != nil {
			return false
		}
	}
	flusher.Flush()
	return true
}

func writeFlush(w io.Writer, flusher http.Flusher, b []byte) bool {
	return writeFrames(w, flusher, [][]byte{b})
}

// serverRequest is the envelope of a pushed frame.
type serverRequest struct {
	Type    string `json:"type"`
	RPCID   string `json:"rpcId"`
	Method  string `json:"method"`
	Payload any    `json:"payload"`
}

type sessionAddedFrame struct {
	Type            string `json:"type"`
	SessionID       string `json:"sessionId"`
	Blank           bool   `json:"blank"`
	ParentSessionID string `json:"parentSessionId,omitempty"`
	Cwd             string `json:"cwd,omitempty"`
}

type agentErrorFrame struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`
	Message   string `json:"message"`
}

type sessionStatusFrame struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`
	Running   bool   `json:"running"`
}

type sessionRemovedFrame struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`
}

type sessionEventFrame struct {
	Type      string    `json:"type"`
	SessionID string    `json:"sessionId"`
	Event     wireEvent `json:"event"`
}

type streamErrorFrame struct {
	Type  string    `json:"type"`
	Error wireError `json:"error"`
}

// The frame types.
const (
	frameSessionAdded   = "host/session-added"
	frameSessionStatus  = "host/session-status"
	frameSessionRemoved = "host/session-removed"
	frameAgentError     = "host/agent-error"
	frameSessionEvent   = "session/event"
	frameStreamError    = "stream/error"
)

// frameOf builds the frame payload for n and its class, or false for an
// unknown kind.
func frameOf(n notice) (string, any, frameClass, bool) {
	switch n.Kind {
	case sessionAdded:
		return frameSessionAdded, sessionAddedFrame{Type: frameSessionAdded, SessionID: n.SessionID, Blank: n.Blank,
			ParentSessionID: n.ParentSessionID, Cwd: n.Cwd}, classHost, true
	case sessionStatus:
		return frameSessionStatus, sessionStatusFrame{Type: frameSessionStatus, SessionID: n.SessionID, Running: n.Running},
			classHost, true
	case sessionRemoved:
		return frameSessionRemoved, sessionRemovedFrame{Type: frameSessionRemoved, SessionID: n.SessionID}, classHost, true
	case sessionEvent:
		return frameSessionEvent, sessionEventFrame{Type: frameSessionEvent, SessionID: n.SessionID, Event: toWireEvent(n.Event)},
			classSession, true
	}
	return "", nil, 0, false
}

// encodeFrame renders n, or false for an unknown kind or an event whose
// data is not valid JSON (the frame is then skipped; a client repairs the
// resulting seq gap by re-pulling history).
func encodeFrame(n notice) ([]byte, frameClass, bool) {
	method, payload, class, ok := frameOf(n)
	if !ok {
		return nil, 0, false
	}
	frame, err := sseData(method, payload)
	return frame, class, err == nil
}

func overflowFrame() []byte {
	frame, _ := sseData(frameStreamError, streamErrorFrame{Type: frameStreamError,
		Error: wireError{Code: codeInternal, Message: "event stream fell behind; reconnect", Details: map[string]any{}}})
	return frame
}

// sseData renders one "data: <server-request>\n\n" block with a fresh rpcId.
func sseData(method string, payload any) ([]byte, error) {
	body, err := jsjson.Marshal(serverRequest{Type: "server-request", RPCID: uuid.NewString(), Method: method, Payload: payload})
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(body)+8)
	out = append(out, "data: "...)
	out = append(out, body...)
	return append(out, "\n\n"...), nil
}

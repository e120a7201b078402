package host

import (
	"context"
	"sync"

	"github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// The mux stream's subscription baseline: GET /api/events.mux opens with one
//
//	session/subscribed {sessionId, lastSeq}
//
// per attached (live) session, in the order the sessions became attached,
// where lastSeq is the seq of the session's last event (next seq − 1, so
// -1 for an empty log); afterwards one more whenever a session becomes
// attached (created, a published subagent child, a cold child resumed by a
// follow-up), queued before any session/event of that session. A client
// merging session/event frames by seq compares lastSeq with the tail it
// installed from history and re-pulls the tail page once when lastSeq is
// beyond it. The frame is sent on the mux stream only, never on
// /events or /api/events.host.
//
// host/session-added's blank is the Attachment's Blank when the backend is
// an attachmentSource that knows the session: true while the session holds
// no turn/start event, as the original's sessionBlank, so a new subagent
// child (descriptor and end-seed, no turn yet) is blank and a cold child
// resumed with its earlier turns is not. Otherwise it is Notice.Blank.
//
// The hub learns what a session holds from the backend's optional
// attachmentSource: once when the handler is created (sessions already
// live) and at each sessionAdded notice; afterwards it follows lastSeq from
// the session/event notices and forgets a session at sessionRemoved. A
// Backend that is not an attachmentSource gets no session/subscribed
// frames.

// attachment is what an attached (live) session holds at one moment.
type attachment struct {
	SessionID string
	// LastSeq is the seq of the session's last event, -1 when it has none.
	LastSeq int64
	// Blank says no turn has started in the session (it holds no
	// turn/start event; the original's sessionBlank). It is the blank of
	// the host/session-added frame.
	Blank bool
}

// attachmentSource is an optional extension of Backend that the event
// streams use for the mux stream's session/subscribed frames.
// runtimeBackend implements it.
type attachmentSource interface {
	// Attachment describes the live session id now, or false when id is not
	// live. The handler calls it from inside the Subscribe callback of id's
	// sessionAdded notice, so it must not block, and it must describe the
	// session as of that notice (no event of id may be notified between
	// the sessionAdded notice and this answer).
	Attachment(id string) (attachment, bool)
	// Attachments describes every live session in the order they became
	// live. The handler calls it once, right after subscribing.
	Attachments() []attachment
}

// attachedSession is the hub's record of one attached session.
type attachedSession struct {
	lastSeq int64
	order   uint64 // attachment order, for the frames a new mux stream opens with
}

type sessionSubscribedFrame struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`
	LastSeq   int64  `json:"lastSeq"`
}

const frameSessionSubscribed = "session/subscribed"

// subscribedFrame renders session/subscribed for id.
func subscribedFrame(id string, lastSeq int64) ([]byte, bool) {
	frame, err := sseData(frameSessionSubscribed, sessionSubscribedFrame{Type: frameSessionSubscribed,
		SessionID: id, LastSeq: lastSeq})
	return frame, err == nil
}

// seedAttached records the sessions live when the handler subscribed. It
// runs under h.mu after the subscription, so a notice already applied is
// never undone (a removed session has left the registry before its notice,
// a live one's seq only grows) and a notice still to come finds the
// record.
func (h *hub) seedAttached() {
	if h.source == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, a := range h.source.Attachments() {
		h.recordAttached(a)
	}
}

// recordAttached enters a into the attached set (keeping the higher lastSeq
// and the first order when a is already there) and returns its lastSeq;
// h.mu is held.
func (h *hub) recordAttached(a attachment) int64 {
	if rec, ok := h.attached[a.SessionID]; ok {
		rec.lastSeq = max(rec.lastSeq, a.LastSeq)
		return rec.lastSeq
	}
	h.attachOrder++
	h.attached[a.SessionID] = &attachedSession{lastSeq: a.LastSeq, order: h.attachOrder}
	return a.LastSeq
}

// attachmentOf asks the source about the session of a sessionAdded notice,
// before h.mu is taken.
func (h *hub) attachmentOf(n notice) (attachment, bool) {
	if n.Kind != sessionAdded || h.source == nil {
		return attachment{}, false
	}
	a, ok := h.source.Attachment(n.SessionID)
	return a, ok && a.SessionID == n.SessionID
}

// track applies n to the attached set and queues session/subscribed on the
// mux streams when n attaches a session (a is its Attachment); h.mu is
// held. An event only advances a session already attached: a late event of
// a removed session does not bring it back.
func (h *hub) track(n notice, a attachment, attached bool) {
	switch n.Kind {
	case sessionAdded:
		if !attached {
			return
		}
		frame, ok := subscribedFrame(a.SessionID, h.recordAttached(a))
		if !ok {
			return
		}
		for s := range h.streams {
			if s.kind == streamMux {
				h.queue(s, frame)
			}
		}
	case sessionEvent:
		if rec, ok := h.attached[n.SessionID]; ok {
			rec.lastSeq = max(rec.lastSeq, n.Event.Seq)
		}
	case sessionRemoved:
		delete(h.attached, n.SessionID)
		delete(h.queues, n.SessionID) // as the original's session/disposed: no frame
		delete(h.queueChanged, n.SessionID)
	}
}

// openMux queues the baseline of a new mux stream: one session/subscribed
// per attached session in attachment order, then the queue snapshots
// (replayQueues); h.mu is held.
func (h *hub) openMux(s *stream) {
	for _, id := range keysInOrder(h.attached, func(a *attachedSession) uint64 { return a.order }) {
		if frame, ok := subscribedFrame(id, h.attached[id].lastSeq); ok {
			s.push(frame)
		}
	}
	h.replayQueues(s)
	if len(s.frames) > 0 {
		s.wake <- struct{}{}
	}
}

// attachedSessions is what runtimeBackend knows of the sessions live in
// its runtime, kept from the runtime's notices: each one's last seq and
// whether it is blank.
type attachedSessions struct {
	mu       sync.Mutex
	sessions map[string]attachment
}

func newAttachedSessions() *attachedSessions {
	return &attachedSessions{sessions: map[string]attachment{}}
}

// observe applies n before the handler sees it: a session that became
// live is recorded as the notice describes it, an appended event advances
// its last seq (a turn/start ends its blankness), a released session is
// forgotten. It does not block.
func (a *attachedSessions) observe(n dsh.Notice) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch n.Kind {
	case dsh.SessionLive:
		a.sessions[n.SessionID] = attachment{SessionID: n.SessionID, LastSeq: n.LastSeq, Blank: n.Blank}
	case dsh.SessionAppended:
		if rec, ok := a.sessions[n.SessionID]; ok {
			rec.LastSeq = max(rec.LastSeq, n.Event.Seq)
			rec.Blank = rec.Blank && n.Event.Type != vocab.TypeTurnStart
			a.sessions[n.SessionID] = rec
		}
	case dsh.SessionReleased:
		delete(a.sessions, n.SessionID)
	}
}

// get is the record of id, false when none.
func (a *attachedSessions) get(id string) (attachment, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	rec, ok := a.sessions[id]
	return rec, ok
}

// seed records h's session as its history shows it, unless a notice
// recorded it first (the notice is the later state).
func (a *attachedSessions) seed(h dsh.History) attachment {
	a.mu.Lock()
	defer a.mu.Unlock()
	if rec, ok := a.sessions[h.Header.ID]; ok {
		return rec
	}
	rec := attachment{SessionID: h.Header.ID, LastSeq: int64(len(h.Events)) - 1, Blank: true}
	for _, e := range h.Events {
		rec.Blank = rec.Blank && e.Type != vocab.TypeTurnStart
	}
	a.sessions[h.Header.ID] = rec
	return rec
}

// Attachment describes the live session id (runtimeBackend is an
// attachmentSource) as the runtime's notices told it; inside the
// SessionLive notice of id it is that notice's, recorded just before.
func (b *runtimeBackend) Attachment(id string) (attachment, bool) {
	return b.attached.get(id)
}

// Attachments describes every live session in the order they became live,
// each read from memory once (the handler calls it once, right after
// subscribing).
func (b *runtimeBackend) Attachments() []attachment {
	var out []attachment
	for _, s := range b.dsh.LiveSessions() {
		h, err := b.dsh.History(context.Background(), s.Header.ID)
		if err != nil {
			continue // it left meanwhile: its released notice follows
		}
		out = append(out, b.attached.seed(h))
	}
	return out
}

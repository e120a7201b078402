package host

import (
	"cmp"
	"maps"
	"slices"

	"github.com/dsh-actors/dsh-actors/event"
)

// The mux stream's queue mirror (the original's publishQueue): the hub
// keeps, per session, the messages its agent's inbox accepted and no turn
// has claimed yet (queueEnqueued adds one, queueLeft removes it), and
// after each change sends
//
//	session/queue {sessionId, items: [{id, message}]}
//
// with the session's whole queue in FIFO order, [] once it empties. A new
// mux stream opens, after its session/subscribed frames, with one
// session/queue per session whose queue is not empty, in the order those
// queues began. Every follow-up is queued (this runtime never steers: a
// session.prompt in mode "steer" is queued too, where the original's
// steering placement stays out of the queue), so each accepted message
// shows up from its acceptance until a turn claims it or a cancel discards
// it; the discards of one cancel send one frame. A session that leaves
// (sessionRemoved) takes its queue along without a frame.

// sessionQueue is the hub's mirror of one session's queued messages.
type sessionQueue struct {
	order uint64 // when the queue began, for the replay order
	items []queueItem
}

// queueItem is one queued message {id, message} as the frame carries it.
type queueItem struct {
	ID      string            `json:"id"`
	Message event.UserMessage `json:"message"`
}

type sessionQueueFrame struct {
	Type      string      `json:"type"`
	SessionID string      `json:"sessionId"`
	Items     []queueItem `json:"items"`
}

const frameSessionQueue = "session/queue"

// publishQueue applies a queueEnqueued or queueLeft notice to the mirror
// and, when the session's queue changed, sends it to every mux stream; the
// discards of one cancel (More set on all but the last) send it once, after
// the last. A message unknown to the mirror (accepted before the handler
// subscribed) changes nothing.
func (h *hub) publishQueue(n notice) {
	h.mu.Lock()
	defer h.mu.Unlock()
	id := n.SessionID
	if n.Kind == queueEnqueued {
		h.enqueue(id, queueItem{ID: n.MessageID, Message: n.Message})
	} else if h.retire(id, n.MessageID) {
		h.queueChanged[id] = true
	}
	if n.More || !h.queueChanged[id] {
		return
	}
	delete(h.queueChanged, id)
	var items []queueItem
	if q := h.queues[id]; q != nil {
		items = q.items
	}
	frame, ok := queueFrame(id, items)
	if !ok {
		return
	}
	for s := range h.streams {
		if s.kind == streamMux {
			h.queue(s, frame)
		}
	}
}

// enqueue adds item to the back of session id's queue; h.mu is held.
func (h *hub) enqueue(id string, item queueItem) {
	q := h.queues[id]
	if q == nil {
		h.queueOrder++
		q = &sessionQueue{order: h.queueOrder}
		h.queues[id] = q
	}
	q.items = append(q.items, item)
	h.queueChanged[id] = true
}

// retire removes messageID from session id's queue and reports whether it
// was there; h.mu is held.
func (h *hub) retire(id, messageID string) bool {
	q := h.queues[id]
	if q == nil {
		return false
	}
	i := slices.IndexFunc(q.items, func(it queueItem) bool { return it.ID == messageID })
	if i < 0 {
		return false
	}
	q.items = slices.Delete(q.items, i, i+1)
	if len(q.items) == 0 {
		delete(h.queues, id)
	}
	return true
}

// replayQueues appends to a new mux stream the queue of every session
// holding one, in the order the queues began; h.mu is held.
func (h *hub) replayQueues(s *stream) {
	for _, id := range keysInOrder(h.queues, func(q *sessionQueue) uint64 { return q.order }) {
		if frame, ok := queueFrame(id, h.queues[id].items); ok {
			s.push(frame)
		}
	}
}

// keysInOrder are m's keys sorted by the order of their values.
func keysInOrder[V any](m map[string]V, order func(V) uint64) []string {
	return slices.SortedFunc(maps.Keys(m), func(a, b string) int { return cmp.Compare(order(m[a]), order(m[b])) })
}

// queueFrame renders session/queue for id holding items.
func queueFrame(id string, items []queueItem) ([]byte, bool) {
	if items == nil {
		items = []queueItem{} // "items":[]
	}
	frame, err := sseData(frameSessionQueue, sessionQueueFrame{Type: frameSessionQueue, SessionID: id, Items: items})
	return frame, err == nil
}

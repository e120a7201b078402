package host

import (
	"cmp"
	"maps"
	"slices"

	"github.com/dsh-actors/dsh-actors/agent"
)

// The mux stream's queue mirror (the original's publishQueue): the hub
// keeps, per session, the messages its agent's inbox accepted and no turn
// has claimed yet (QueueEnqueued adds one, QueueLeft removes it), and
// after each change sends
//
//	session/queue {sessionId, items: [{id, message}]}
//
// with the session's whole queue in FIFO order, [] once it empties. A new
// mux stream opens, after its session/subscribed frames, with one
// session/queue per session whose queue is not empty, in the order those
// queues began. Every follow-up is queued (this runtime never steers), so
// each accepted message shows up once, from its acceptance until a turn
// claims it or a cancel discards it.

// sessionQueue is the hub's mirror of one session's queued messages.
type sessionQueue struct {
	order uint64 // when the queue began, for the replay order
	items []queueItem
}

// queueItem is one queued message {id, message} as the frame carries it.
type queueItem struct {
	ID      string         `json:"id"`
	Message *agent.Message `json:"message"`
}

type sessionQueueFrame struct {
	Type      string      `json:"type"`
	SessionID string      `json:"sessionId"`
	Items     []queueItem `json:"items"`
}

const frameSessionQueue = "session/queue"

// publishQueue applies a QueueEnqueued or QueueLeft notice to the mirror
// and sends the session's queue to every mux stream. A message unknown to
// the mirror (accepted before the handler subscribed) changes nothing.
func (h *hub) publishQueue(n Notice) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queues[n.SessionID]
	switch {
	case n.Kind == QueueEnqueued:
		if q == nil {
			h.queueOrder++
			q = &sessionQueue{order: h.queueOrder}
			h.queues[n.SessionID] = q
		}
		q.items = append(q.items, queueItem{ID: n.MessageID, Message: n.Message})
	case q == nil:
		return
	default:
		i := slices.IndexFunc(q.items, func(it queueItem) bool { return it.ID == n.MessageID })
		if i < 0 {
			return
		}
		q.items = slices.Delete(q.items, i, i+1)
		if len(q.items) == 0 {
			delete(h.queues, n.SessionID)
		}
	}
	frame, ok := queueFrame(n.SessionID, q.items)
	if !ok {
		return
	}
	for s := range h.streams {
		if s.kind.carries(classSession) {
			h.queue(s, frame)
		}
	}
}

// replayQueues appends to a new mux stream the queue of every session
// holding one, in the order the queues began; h.mu is held.
func (h *hub) replayQueues(s *stream) {
	for _, id := range keysInOrder(h.queues, func(q *sessionQueue) uint64 { return q.order }) {
		if frame, ok := queueFrame(id, h.queues[id].items); ok {
			s.frames = append(s.frames, frame)
		}
	}
}

// keysInOrder are m's keys sorted by the order of their values.
func keysInOrder[V any](m map[string]V, order func(V) uint64) []string {
	return slices.SortedFunc(maps.Keys(m), func(a, b string) int { return cmp.Compare(order(m[a]), order(m[b])) })
}

// queueFrame renders session/queue for id holding items.
func queueFrame(id string, items []queueItem) ([]byte, bool) {
	frame, err := sseData(frameSessionQueue, sessionQueueFrame{Type: frameSessionQueue, SessionID: id,
		Items: append([]queueItem{}, items...)})
	return frame, err == nil
}

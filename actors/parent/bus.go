package parent

import (
	"log/slog"

	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/listeners"
)

// The registry's own event types; the inbox's (inbox.Enqueue,
// inbox.Dequeue, inbox.Discard, inbox.StatusChange) pass through as they
// are.
const (
	EventCreated  inbox.EventKind = "agent/created"
	EventDisposed inbox.EventKind = "agent/disposed"
)

// Event is one registry or inbox change of one agent incarnation: the
// inbox's event with the agent it happened to.
type Event struct {
	inbox.Event
	AgentID     string
	Incarnation uint64
}

// bus fans Events out to listeners. Its zero value is not usable; the
// Registry makes one.
//
// Listeners run on the goroutine that made the change, in subscription
// order. The events of one agent incarnation arrive one at a time and in
// order (agent/created first, agent/disposed last, the inbox events in
// between in the order the inbox made them); events of different agents may
// arrive concurrently, so listeners must be safe for concurrent use. A
// listener may call back into the runtime; it should return quickly, as it
// delays its agent's later events, and Create and Dispose, which return
// once their agent/created or agent/disposed has been delivered (one made
// by a listener of that same agent follows once the listener returns).
type bus struct {
	logger    *slog.Logger
	listeners listeners.List[Event]
}

func newBus(logger *slog.Logger) *bus { return &bus{logger: logger} }

// Subscribe adds a listener and returns its idempotent cancel. An event
// being delivered while Subscribe runs may or may not reach the new
// listener.
func (b *bus) Subscribe(fn func(Event)) (cancel func()) { return b.listeners.Add(fn) }

// publish calls every listener with e on the calling goroutine. A
// panicking listener is logged; the others still run.
func (b *bus) publish(e Event) {
	for _, fn := range b.listeners.Funcs() {
		b.call(fn, e)
	}
}

// call runs one listener, containing its panic.
func (b *bus) call(listener func(Event), e Event) {
	defer func() {
		if r := recover(); r != nil {
			b.logger.Error("actors: event listener panicked", "event", e.Type, "agent", e.AgentID, "panic", r)
		}
	}()
	listener(e)
}

package parent

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/dsh-actors/dsh-actors/inbox"
)

// Event types carried by the Bus.
const (
	EventCreated  = "agent/created"
	EventDisposed = "agent/disposed"
	EventEnqueue  = string(inbox.Enqueue)
	EventDequeue  = string(inbox.Dequeue)
	EventDiscard  = string(inbox.Discard)
	EventStatus   = string(inbox.StatusChange)
)

// Event is one registry or inbox change of one agent.
type Event struct {
	Type        string
	AgentID     string
	Incarnation uint64
	MessageID   string       // enqueue, dequeue, discard
	Status      inbox.Status // agent/status
}

// Bus fans Events out to listeners, in publication order, one event at a
// time. Its zero value is not usable; the Registry makes one.
type Bus struct {
	logger    *slog.Logger
	count     atomic.Int32
	mu        sync.Mutex
	listeners []listener // replaced, never mutated, on (un)subscribe
	next      uint64
	queue     []Event
	draining  bool
}

func newBus(logger *slog.Logger) *Bus {
	return &Bus{logger: logger}
}

type listener struct {
	key uint64
	fn  func(Event)
}

// Subscribe adds a listener and returns its idempotent cancel. Listeners
// are called in subscription order. A listener
// runs on the publishing goroutine; it may call back into the runtime (its
// own events are then delivered after it returns). Events published before
// Subscribe returns may or may not reach it.
func (b *Bus) Subscribe(fn func(Event)) (cancel func()) {
	b.mu.Lock()
	b.next++
	key := b.next
	b.listeners = append(b.listeners[:len(b.listeners):len(b.listeners)], listener{key: key, fn: fn})
	b.count.Add(1)
	b.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { b.unsubscribe(key) }) }
}

func (b *Bus) unsubscribe(key uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	kept := make([]listener, 0, len(b.listeners))
	for _, l := range b.listeners {
		if l.key != key {
			kept = append(kept, l)
		}
	}
	b.listeners = kept
	b.count.Add(-1)
}

// Publish queues e and delivers every queued event unless another
// goroutine is delivering already (it then delivers e too, in order).
func (b *Bus) Publish(e Event) {
	if b.count.Load() == 0 {
		return
	}
	b.mu.Lock()
	b.queue = append(b.queue, e)
	b.mu.Unlock()
	b.drain()
}

func (b *Bus) drain() {
	b.mu.Lock()
	if b.draining {
		b.mu.Unlock()
		return
	}
	b.draining = true
	for len(b.queue) > 0 {
		e := b.queue[0]
		b.queue[0] = Event{}
		b.queue = b.queue[1:]
		listeners := b.listeners
		b.mu.Unlock()
		for _, l := range listeners {
			b.call(l.fn, e)
		}
		b.mu.Lock()
	}
	b.queue = nil
	b.draining = false
	b.mu.Unlock()
}

// call runs one listener, containing its panic.
func (b *Bus) call(listener func(Event), e Event) {
	defer func() {
		if r := recover(); r != nil {
			b.logger.Error("actors: event listener panicked", "event", e.Type, "agent", e.AgentID, "panic", r)
		}
	}()
	listener(e)
}

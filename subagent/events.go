package subagent

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dsh-actors/dsh-actors/actors/manager"
)

// RunInfo is the subagent/start payload {runId, provider, id, local} plus the
// delegating parent's id (the scope both edges belong to).
type RunInfo = manager.RunInfo

// RunEndInfo is the subagent/end payload; a nil LastAssistantMessage means
// the key is absent.
type RunEndInfo = manager.RunEndInfo

// The lifecycle event types.
const (
	EventStart           = "subagent/start"
	EventEnd             = "subagent/end"
	EventProviderAdded   = "subagent/provider-added"
	EventProviderRemoved = "subagent/provider-removed"
)

// Event is one lifecycle event: *StartEvent, *EndEvent, *ProviderAdded or
// *ProviderRemoved.
type Event interface {
	// Type is the event's name, e.g. "subagent/start".
	Type() string
}

// StartEvent is subagent/start: a one-shot run was returned, or a
// continuable epoch became resident.
type StartEvent struct{ RunInfo }

// EndEvent is subagent/end: the run's result settled, or the epoch's
// disposal finished (after ownership was released).
type EndEvent struct{ RunEndInfo }

// ProviderAdded is subagent/provider-added.
type ProviderAdded struct{ Provider Provider }

// ProviderRemoved is subagent/provider-removed.
type ProviderRemoved struct{ Name string }

// Type returns "subagent/start".
func (*StartEvent) Type() string { return EventStart }

// Type returns "subagent/end".
func (*EndEvent) Type() string { return EventEnd }

// Type returns "subagent/provider-added".
func (*ProviderAdded) Type() string { return EventProviderAdded }

// Type returns "subagent/provider-removed".
func (*ProviderRemoved) Type() string { return EventProviderRemoved }

// emitter fans events out to listeners in subscription order, each called
// synchronously on the emitting goroutine. Emitting reads an immutable
// listener list without a lock; subscribe and cancel replace it.
type emitter struct {
	logger    *slog.Logger
	mu        sync.Mutex // serializes subscribe and cancels
	next      int
	listeners atomic.Pointer[[]keyedListener]
}

type keyedListener struct {
	key int
	fn  func(Event)
}

func newEmitter(logger *slog.Logger) *emitter { return &emitter{logger: logger} }

// subscribe adds fn and returns its idempotent cancel. An event being
// emitted meanwhile may or may not reach fn.
func (e *emitter) subscribe(fn func(Event)) (cancel func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	key := e.next
	e.next++
	e.replace(append(slices.Clone(e.snapshot()), keyedListener{key: key, fn: fn}))
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.replace(slices.DeleteFunc(slices.Clone(e.snapshot()), func(l keyedListener) bool { return l.key == key }))
	}
}

// replace publishes a new listener list (e.mu held).
func (e *emitter) replace(ls []keyedListener) { e.listeners.Store(&ls) }

// snapshot is the current listener list; callers must not modify it.
func (e *emitter) snapshot() []keyedListener {
	if p := e.listeners.Load(); p != nil {
		return *p
	}
	return nil
}

// emitContained calls every listener; a panicking listener is logged and
// its peers still run.
func (e *emitter) emitContained(ev Event) {
	for _, l := range e.snapshot() {
		e.callContained(l.fn, ev)
	}
}

func (e *emitter) callContained(fn func(Event), ev Event) {
	defer func() {
		if r := recover(); r != nil {
			e.logger.Warn(fmt.Sprintf("subagent: %s listener threw: %s", ev.Type(), renderPanic(r)))
		}
	}()
	fn(ev)
}

// emitUncontained calls every listener and returns the first panic as an
// error, skipping the listeners after it.
func (e *emitter) emitUncontained(ev Event) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("subagent: %s listener threw: %s", ev.Type(), renderPanic(r))
		}
	}()
	for _, l := range e.snapshot() {
		l.fn(ev)
	}
	return nil
}

func renderPanic(r any) string {
	switch v := r.(type) {
	case error:
		return v.Error()
	case string:
		return v
	case fmt.Stringer:
		return v.String()
	default:
		return "<unrenderable thrown value>"
	}
}

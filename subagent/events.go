package subagent

import (
	"fmt"
	"log/slog"

	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/internal/listeners"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// Event is one lifecycle event: *StartEvent, *EndEvent, or a provider's
// registration or removal (Type "subagent/provider-added" or
// "subagent/provider-removed").
type Event interface {
	// Type is the event's name, e.g. "subagent/start".
	Type() string
}

// StartEvent is subagent/start: a one-shot run was returned, or a
// continuable epoch became resident.
type StartEvent struct{ manager.RunInfo }

// EndEvent is subagent/end: the run's result settled, or the epoch's
// disposal finished (after ownership was released).
type EndEvent struct{ manager.RunEndInfo }

// providerAddedEvent is subagent/provider-added: provider was registered.
type providerAddedEvent struct{ provider Provider }

// providerRemovedEvent is subagent/provider-removed: the provider registered
// under name was removed.
type providerRemovedEvent struct{ name string }

// Type returns "subagent/start".
func (*StartEvent) Type() string { return vocab.TypeSubagentStart }

// Type returns "subagent/end".
func (*EndEvent) Type() string { return vocab.TypeSubagentEnd }

// Type returns "subagent/provider-added".
func (*providerAddedEvent) Type() string { return vocab.TypeSubagentProviderAdded }

// Type returns "subagent/provider-removed".
func (*providerRemovedEvent) Type() string { return vocab.TypeSubagentProviderRemoved }

// emitter fans events out to listeners in subscription order, each called
// synchronously on the emitting goroutine.
type emitter struct {
	logger    *slog.Logger
	listeners listeners.List[Event]
}

func newEmitter(logger *slog.Logger) *emitter { return &emitter{logger: logger} }

// subscribe adds fn and returns its idempotent cancel. An event being
// emitted meanwhile may or may not reach fn.
func (e *emitter) subscribe(fn func(Event)) (cancel func()) { return e.listeners.Add(fn) }

// emitContained calls every listener; a panicking listener is logged and
// its peers still run.
func (e *emitter) emitContained(ev Event) {
	for _, fn := range e.listeners.Funcs() {
		e.callContained(fn, ev)
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
	for _, fn := range e.listeners.Funcs() {
		fn(ev)
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

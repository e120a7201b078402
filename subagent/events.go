package subagent

import (
	"fmt"
	"log/slog"

	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/listeners"
	"github.com/dsh-actors/dsh-actors/session"
)

// RunInfo is the subagent/start payload {runId, provider, id, local}, plus
// the delegating parent's session id: the scope both edges belong to.
type RunInfo struct {
	RunID    string `json:"runId"`
	Provider string `json:"provider"`
	ID       string `json:"id"`
	Local    bool   `json:"local"`
	ParentID string `json:"-"`
}

// RunEndInfo is the subagent/end payload: the start's fields plus the stop
// reason and, when present, the last assistant message. A nil
// LastAssistantMessage means the key is absent; a non-nil empty slice is an
// empty message (one-shot runs always carry their output).
type RunEndInfo struct {
	RunInfo
	StopReason           agent.StopReason `json:"stopReason"`
	LastAssistantMessage []event.Block    `json:"lastAssistantMessage,omitempty"`
	// DiscardedFollowups counts the messages the child's inbox had
	// accepted (a follow-up, or the first prompt) that the epoch discarded
	// before they ran, by its teardown, a cancel, or because its session
	// log failed: they were never logged and are lost. The key
	// discardedFollowups is absent when it is zero.
	DiscardedFollowups int `json:"discardedFollowups,omitempty"`
}

// MarshalJSON keeps an empty non-nil LastAssistantMessage as [] and omits a
// nil one; nothing is HTML-escaped (the blocks' bytes pass as they are).
func (e RunEndInfo) MarshalJSON() ([]byte, error) {
	type plain struct {
		RunID                string           `json:"runId"`
		Provider             string           `json:"provider"`
		ID                   string           `json:"id"`
		Local                bool             `json:"local"`
		StopReason           agent.StopReason `json:"stopReason"`
		LastAssistantMessage *[]event.Block   `json:"lastAssistantMessage,omitempty"`
		DiscardedFollowups   int              `json:"discardedFollowups,omitempty"`
	}
	p := plain{RunID: e.RunID, Provider: e.Provider, ID: e.ID, Local: e.Local, StopReason: e.StopReason,
		DiscardedFollowups: e.DiscardedFollowups}
	if e.LastAssistantMessage != nil {
		p.LastAssistantMessage = &e.LastAssistantMessage
	}
	return session.EncodeData(p)
}

// runEndInfo is the manager's end edge as this package reports it.
func runEndInfo(e manager.RunEndInfo) RunEndInfo {
	return RunEndInfo{RunInfo: RunInfo(e.RunInfo), StopReason: e.StopReason,
		LastAssistantMessage: e.LastAssistantMessage, DiscardedFollowups: e.DiscardedFollowups}
}

// Event is one lifecycle event: *StartEvent, *EndEvent, *providerAdded or
// *providerRemoved.
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

// providerAdded is subagent/provider-added.
type providerAdded struct{ Provider Provider }

// providerRemoved is subagent/provider-removed.
type providerRemoved struct{ Name string }

// Type returns "subagent/start".
func (*StartEvent) Type() string { return event.TypeSubagentStart }

// Type returns "subagent/end".
func (*EndEvent) Type() string { return event.TypeSubagentEnd }

// Type returns "subagent/provider-added".
func (*providerAdded) Type() string { return event.TypeSubagentProviderAdded }

// Type returns "subagent/provider-removed".
func (*providerRemoved) Type() string { return event.TypeSubagentProviderRemoved }

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

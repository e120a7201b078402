package manager

import (
	"context"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/inbox"
)

// receiver is the protoactor face of the Manager.
type receiver Manager

// produce makes the manager's actor (its protoactor Producer).
func (m *Manager) produce() actor.Actor { return (*receiver)(m) }

// halt stops the actor once; later messages are dropped instead of
// dead-lettered.
func (m *Manager) halt() {
	m.haltMu.Lock()
	already := m.halted
	m.halted = true
	m.haltMu.Unlock()
	if !already {
		m.system.Root.Stop(m.pid)
	}
}

// epochLink carries what a resident epoch's agent tells, on the child's
// goroutines, to the manager; it is also the releaser of the epoch's
// stop, and out is its release step's outcome (the actor reads it once
// released arrived).
type epochLink struct {
	m   *Manager
	a   *activation
	out teardownOutcome
}

// event is the epoch's inbox observer (onChildEvent).
func (l *epochLink) event(e parent.Event) { l.m.onChildEvent(l.a, e) }

// fenced tells the actor the epoch's lease was fenced.
func (l *epochLink) fenced() { l.m.send(childFenced{l.a}) }

// stopping tells the actor the epoch's actor began stopping, unless
// the actor is disposing the epoch already: its own disposal stopped it,
// and the notice would change nothing (stopping), so a drain posts none
// per agent. disposing is set in the step that opened the disposal,
// before that step stops any actor.
func (l *epochLink) stopping() {
	if !l.a.disposing.Load() {
		l.m.send(childStopping{l.a})
	}
}

// BeforeRelease is the release step's first part (releaseStep).
func (l *epochLink) BeforeRelease() { l.out = l.m.releaseStep(l.a) }

// Released tells the actor the release step ended: the handle's own
// release failed with err, or not (nil).
func (l *epochLink) Released(err error) {
	if err != nil && l.out.failure == nil {
		l.out.failure = handleDisposalFailed(l.a.childID, err)
	}
	l.m.send(released{l.a})
}

// queuedLink carries the end of a queued op's context to the actor.
type queuedLink struct {
	m *Manager
	o *op
}

// abandoned tells the actor o's context ended while it waited.
func (l queuedLink) abandoned() { l.m.send(lockAbandoned{l.o}) }

// onChildEvent forwards the events of a's agent the actor acts on:
// a message dequeued or discarded, and an idle status that can still
// settle a. It is a's own observer, so it runs on the publishing
// goroutine with no lookup.
func (m *Manager) onChildEvent(a *activation, e parent.Event) {
	switch e.Type {
	case inbox.Dequeue:
		m.send(childEvent{a, e})
	case inbox.Discard:
		m.settleDiscarded(a, e.MessageID)
		m.send(childEvent{a, e})
	case inbox.StatusChange:
		if e.Status == inbox.Idle && !a.disposing.Load() {
			m.send(childEvent{a, e})
		}
	}
}

// onAgentEvent forwards to the actor the disposal of a scoped-drain root,
// which ends its cut-off, and of a parent whose children have remembered
// ends, which drops them. It runs on the publishing goroutine.
func (m *Manager) onAgentEvent(e parent.Event) {
	if e.Type != parent.EventDisposed {
		return
	}
	if m.roots.has(e.AgentID) || m.endParents.has(e.AgentID) {
		m.send(agentDisposed{e.AgentID, e.Incarnation})
	}
}

// rootHints are the agent ids whose disposal the bus listener posts to the
// actor (scoped-drain roots with a cut-off; parents of remembered ends),
// so it does not post the disposal of other agents. Only the actor writes
// them; listeners on any goroutine read them without a lock. They are a
// filter, never a decision.
type rootHints struct {
	ids sync.Map // id → *int: its count (read by the actor only)
}

// has reports whether id is counted.
func (h *rootHints) has(id string) bool {
	_, ok := h.ids.Load(id)
	return ok
}

// added and gone count the cut-offs of a root id (actor only).
func (h *rootHints) added(id string) {
	v, ok := h.ids.Load(id)
	if !ok {
		v = new(int)
		h.ids.Store(id, v)
	}
	*v.(*int)++
}

func (h *rootHints) gone(id string) {
	v, ok := h.ids.Load(id)
	if !ok {
		return
	}
	n := v.(*int)
	*n--
	if *n <= 0 {
		h.ids.Delete(id)
	}
}

// settleDiscarded marks in the durable inbox the message a teardown
// discarded unrun, so that no later epoch replays it. It runs on the
// publishing goroutine of the child's inbox events, before the child's
// lease is released. A fenced child's discards are not marked: the epoch
// that took its lease over replays them.
func (m *Manager) settleDiscarded(a *activation, messageID string) {
	if m.inbox == nil || !a.disposing.Load() || m.fenced(a) {
		return
	}
	epoch := a.handle.Session().Epoch()
	if err := m.inbox.Discard(context.Background(), a.childID, epoch, []string{messageID}); err != nil {
		m.logger.Warn("subagent: a discarded follow-up stays in the durable inbox", "child", a.childID, "messageId", messageID, "err", err)
	}
}

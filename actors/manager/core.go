package manager

import (
	"fmt"
	"log/slog"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
)

// core is the manager's decisions: the state the actor owns and the step
// functions over it. A step reads the world only through env (reads that
// never wait) and says what is to be done by the effects it returns
// (effects.go): it never starts a goroutine, sends to an actor, waits or
// touches a store. The actor is the shell around it: it feeds each
// message to step and performs the effects; the interaction tests feed
// messages to a core whose env is a table.
type core struct {
	st  *state
	env env
	// durable: the store's inbox admits follow-ups durably; wakes: it
	// also wakes the processes holding a child (session.Waker).
	durable, wakes bool
	logger         *slog.Logger
	roots          rootHints // scoped-drain roots with a cut-off
	endParents     rootHints // the parents of the children in state.ends
	effects        []effect  // what the step under way decided to do
	spare          []effect  // the room of the last effects done (recycle)
}

// env is the world as a step sees it: what the registry, the sessions and
// a resident epoch say now. Nothing in it waits or sends; it is read in
// the actor only. Handles are the core's names for agents: it never calls
// one, it asks env.
type env interface {
	// closed is the runtime's shutdown error, nil while it runs.
	closed() error
	// hasStore reports whether sessions persist.
	hasStore() bool
	// isLive reports whether p is the registry's exact live entry.
	isLive(p *parent.Handle) bool
	// liveLineage is p and its live ancestors, nearest first.
	liveLineage(p *parent.Handle) []*parent.Handle
	// liveAgent is the live agent with id, or nil.
	liveAgent(id string) *parent.Handle
	// sessionLive reports whether a session or an agent with id is live.
	sessionLive(id string) bool
	// idOf is p's agent id; headerParent the parent session its durable
	// header names.
	idOf(p *parent.Handle) string
	headerParent(h *parent.Handle) string
	// running reports whether h's turn is open; writeFailure is why its
	// session log can take no more writes (nil while it can).
	running(h *parent.Handle) bool
	writeFailure(h *parent.Handle) error
	// post hands msg to h's inbox; it never waits.
	post(h *parent.Handle, msg event.UserMessage) error
	// newID is a fresh id (a run's, a message's).
	newID() string
}

// step takes the decisions msg calls for and returns what is to be done.
// A decision that panics (a bug) is logged and the op its message
// carried, if any, gets the failure as its verdict: the actor is never
// restarted with its state lost.
func (m *core) step(msg any) []effect {
	m.effects = m.spare
	m.spare = nil
	m.decideContained(msg)
	effects := m.effects
	m.effects = nil
	return effects
}

// recycle hands back the effects a step returned, once they were done,
// for the next step to fill.
func (m *core) recycle(effects []effect) {
	clear(effects)
	m.spare = effects[:0]
}

// decideContained is decide, with a panic turned into the failure of the
// op msg carried.
func (m *core) decideContained(msg any) {
	defer m.contain(msg)
	m.decide(msg)
}

// decide dispatches msg to its step.
func (m *core) decide(msg any) {
	switch msg := msg.(type) {
	case startRequest:
		m.start(msg.op)
	case followupRequest:
		m.followup(msg.op)
	case wakeRequest:
		m.wake(msg.op)
	case waitEpochRequest:
		m.emit(watchRegistered{msg.reply, m.watchEpoch(msg.childID)})
	case scopedDrainRequest:
		m.drainScoped(msg.ctx, msg.parents, msg.result)
	case drainAllRequest:
		m.closeAdmission(msg.result)
	case materializationsSettled:
		m.disposeForests(msg.result)
	default:
		m.decideResult(msg)
	}
}

// decideResult dispatches an I/O result or a notice to its step.
func (m *core) decideResult(msg any) {
	switch msg := msg.(type) {
	case prepared:
		m.prepared(msg)
	case lockAbandoned:
		m.lockAbandoned(msg.op)
	case resumeLoaded:
		m.resumeLoaded(msg)
	case opened:
		m.opened(msg)
	case startEmitted:
		m.startEmitted(msg)
	case admitted:
		m.admitted(msg)
	case admittedElsewhere:
		m.admittedElsewhere(msg)
	case commitDiscarded:
		m.commitDiscarded(msg)
	case pendingRead:
		m.pendingRead(msg)
	case disposalSettled:
		m.disposalSettled(msg.op)
	case drainRead:
		m.drainRead(msg)
	case orphanRead:
		m.orphanRead(msg)
	default:
		m.decideNotice(msg)
	}
}

// decideNotice dispatches what the children, the bus and the teardowns
// tell the manager.
func (m *core) decideNotice(msg any) {
	switch msg := msg.(type) {
	case childEvent:
		m.applyChildEvent(msg)
	case childFenced:
		m.statusIdle(msg.a)
	case agentDisposed:
		m.rootDisposed(msg.id, msg.incarnation)
		m.parentDisposed(msg.id)
	case childStopping:
		m.stopping(msg.a)
	case released:
		m.released(msg.a, msg.a.link.out)
	}
}

// emit adds e to what the step under way decided to do.
func (m *core) emit(e effect) { m.effects = append(m.effects, e) }

// contain recovers a decision's panic: it is logged and fails the op msg
// carried.
func (m *core) contain(msg any) {
	r := recover()
	if r == nil {
		return
	}
	m.logger.Error(fmt.Sprintf("subagent: continuation manager decision panicked: %v", r))
	if c, ok := msg.(carrier); ok {
		if o := c.entry(); !o.replied {
			o.replied = true
			m.emit(reply{o, outcome{err: fmt.Errorf("subagent: continuation manager failed: %v", r)}})
		}
	}
}

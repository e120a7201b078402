package manager

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/inbox"
)

// The manager actor's typed messages: what its children, the agent bus
// and the work it runs off the actor tell it. Each is handled by one
// method, in Receive.
type (
	// childEvent is an inbox event of a resident child: a message
	// dequeued into a turn or discarded unrun, or the child gone idle.
	childEvent struct {
		a *activation
		e parent.Event
	}
	// childFenced: a's session lease was fenced and its cancelled turn
	// has ended; a is disposed at once, whatever it owns.
	childFenced struct{ a *activation }
	// agentDisposed: an agent left the registry (a scoped-drain root or a
	// parent of remembered ends).
	agentDisposed struct {
		id          string
		incarnation uint64
	}
	// teardownDone: a's teardown finished with out, and its actor's
	// Terminated arrived first (or none will come).
	teardownDone struct {
		a   *activation
		out teardownOutcome
	}
)

// Receive handles one message; it never blocks.
func (r *receiver) Receive(c actor.Context) {
	m := (*Manager)(r)
	m.self = c
	defer m.contain()
	switch msg := c.Message().(type) {
	case childEvent:
		m.onChildEventInActor(msg.a, msg.e)
	case childFenced:
		m.statusIdle(msg.a)
	case agentDisposed:
		m.rootDisposed(msg.id, msg.incarnation)
		m.parentDisposed(msg.id)
	case teardownDone:
		m.release(msg.a, msg.out)
	case resumeLoaded:
		m.resumeLoaded(msg)
	case task:
		msg()
	case *actor.Terminated:
		m.onTerminated(msg.Who)
	case *actor.Stopped:
		close(m.stopped)
	}
}

// onChildEventInActor applies a child's inbox event to its Activation.
func (m *Manager) onChildEventInActor(a *activation, e parent.Event) {
	switch e.Type {
	case inbox.Dequeue:
		m.messageLeft(a, e.MessageID)
	case inbox.Discard:
		m.messageDiscarded(a, e.MessageID)
	case inbox.StatusChange:
		m.statusIdle(a)
	}
}

// send queues msg for the actor, after everything sent before. After the
// actor stopped, msg is dropped (only late bus events can be).
func (m *Manager) send(msg any) {
	m.haltMu.RLock()
	defer m.haltMu.RUnlock()
	if !m.halted {
		m.system.Root.Send(m.pid, msg)
	}
}

package manager

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/session"
)

// The manager actor's typed messages. Each is handled by one method, in
// Receive.
//
// Requests are the calls of the manager's methods; an entry request
// carries its op, whose reply channel gets the verdict (op.go).
type (
	startRequest    struct{ *op } // StartContinuable (start.go)
	followupRequest struct{ *op } // Followup (followup.go)
	wakeRequest     struct{ *op } // a wake from the store (wake.go)
	// waitEpochRequest registers a WaitEpoch caller (wait.go).
	waitEpochRequest struct {
		childID string
		reply   chan<- chan RunEndInfo
	}
	// scopedDrainRequest is DrainContinuableDescendants (drain.go).
	scopedDrainRequest struct {
		ctx     context.Context
		parents []*parent.Handle
		result  chan<- error
	}
	// drainAllRequest is the manager-wide drain of Close (drain.go).
	drainAllRequest struct{ result chan<- error }
	// materializationsSettled: the materializations a manager-wide
	// drain waited for published or rolled back.
	materializationsSettled struct{ result chan<- error }
)

// I/O results: what the work an op started off the actor found.
type (
	// prepared: the provider prepared a start's seed; create is the
	// child's creation from it.
	prepared struct {
		*op
		create *parent.CreateSpec
		err    error
	}
	// lockAbandoned: a queued op's context ended.
	lockAbandoned struct{ *op }
	// resumeLoaded: a cold resume's repairing load ended.
	resumeLoaded struct {
		*op
		log *session.Log
		err error
	}
	// opened: the op's epoch was created or resumed; drained is DRAINING
	// for a resume below a drain in force.
	opened struct {
		*op
		h       *parent.Handle
		drained error
		err     error
	}
	// startEmitted: subagent/start was published, or failed with err.
	startEmitted struct {
		*op
		err error
	}
	// admitted: the store's durable inbox committed the op's message to
	// the resident epoch, or refused it.
	admitted struct {
		*op
		err error
	}
	// admittedElsewhere: the same, for a child another process holds.
	admittedElsewhere struct {
		*op
		err error
	}
	// commitDiscarded: a committed message that was refused afterwards
	// was discarded from the durable inbox; refusal is the op's answer.
	commitDiscarded struct {
		*op
		refusal error
		err     error
	}
	// pendingRead: the child's durable inbox's unclaimed messages.
	pendingRead struct {
		*op
		pending []session.Admission
		err     error
	}
	// disposalSettled: the disposal the op waited for settled, or the
	// op's context ended first.
	disposalSettled struct{ *op }
	// drainRead: whether a drain in force closes a woken resident child.
	drainRead struct {
		*op
		drained bool
		err     error
	}
	// orphanRead: whether a woken absent child has pending messages and
	// no live holder, and then its log.
	orphanRead struct {
		*op
		orphaned bool
		log      *session.Log
		err      error
	}
)

// What the manager's children, the agent bus and the teardowns tell it.
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
	// childStopping: a's actor's stop began (its Stopping).
	childStopping struct{ a *activation }
	// released: the release step of a's actor's stop ended with
	// a.link.out (releaseStep); the actor's stop ends next.
	released struct{ a *activation }
)

// Receive feeds one message to the core and performs the effects of its
// step; it never blocks.
func (r *receiver) Receive(c actor.Context) {
	m := (*Manager)(r)
	m.self = c
	switch msg := c.Message().(type) {
	case *actor.Stopped:
		close(m.stopped)
	default:
		effects := m.step(msg)
		m.perform(effects)
		m.recycle(effects)
	}
}

// applyChildEvent applies a child's inbox event to its Activation.
func (m *core) applyChildEvent(msg childEvent) {
	a, e := msg.a, msg.e
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

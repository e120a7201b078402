package manager

import (
	"context"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
)

// Followup delivers content from p to its continuable child childID as the
// child's next FIFO turn and returns the MessageID once the child's inbox
// accepted it. Routing depends on residency only: a running child queues it
// behind the open turn, a waiting child is woken, an absent child is
// cold-resumed into a new epoch from its log (the repairing load). A
// follow-up that meets a disposal in progress waits for it and then
// cold-resumes; so does one to a child whose session lease was fenced
// (taken over by another holder), once it is disposed. Authority is the exact live direct parent recorded in the
// child's durable header: checked before rebuilding and again in the final
// admission step. A resident child whose session log has failed refuses
// the message (DURABILITY_FAILED) rather than accept what it could never
// log. source is attribution only. ctx governs lookup, rebuild
// and admission; cancelling it after acceptance neither cancels the turn
// nor disposes the child. A nil parent is UNAUTHORIZED. It blocks the
// caller until the verdict.
func (m *Manager) Followup(ctx context.Context, p *parent.Handle, childID string, content []event.Block, source event.Source) (string, error) {
	if p == nil {
		return "", notExactParent(childID)
	}
	return m.call(ctx, followupRequest{&op{kind: opFollowup, ctx: ctx, childID: childID, parent: p, content: content, source: source}})
}

// A follow-up takes these steps in the actor:
//
//  1. followup: the DRAINING gate, then the child's lock.
//  2. route, holding the lock: by what the actor knows of the child
//     (decideRoute), one of
//     - resident: submit (admission.go), whose final step checks the
//     parent's authority;
//     - absent: a cold resume (resume.go);
//     - elsewhere: admitElsewhere, to the durable inbox of the process
//     holding the child;
//     - after a disposal (one open, or one opened now for a fenced
//     epoch): the lock given up, the disposal awaited, then step 1
//     again (retry).

// followup is step 1.
func (m *core) followup(o *op) {
	if err := m.admit(o.parent); err != nil {
		m.finish(o, "", err)
		return
	}
	m.lock(o)
}

// route is step 2.
func (m *core) route(o *op) {
	a := m.st.activations[o.childID]
	switch m.routeOf(o, a) {
	case routeElsewhere:
		m.admitElsewhere(o)
	case routeAbsent:
		m.coldResume(o)
	case routeAfterDisposal:
		m.retryAfter(o, a.disposal)
	case routeDisposeFenced: // its lease moved on: dispose it, then cold-resume under a new one
		m.retryAfter(o, m.disposeFenced(a))
	case routeResident:
		o.a = a
		m.submit(o)
	}
}

// route is where a follow-up or a wake for a child goes, decided from
// what the actor knows of the child alone.
type route int

const (
	routeResident      route = iota // the resident epoch takes it
	routeAbsent                     // no epoch here: cold-resume one
	routeElsewhere                  // another process holds the child: its durable inbox
	routeAfterDisposal              // the epoch is being disposed: wait, then route again
	routeDisposeFenced              // the epoch's lease was fenced: dispose it, then route again
)

// decideRoute is the routing decision: resident is the child's epoch here
// (nil when absent), elsewhere whether another process was last found
// holding it, fenced whether the resident epoch's lease was fenced.
func decideRoute(resident *activation, elsewhere, fenced bool) route {
	switch {
	case resident == nil && elsewhere:
		return routeElsewhere
	case resident == nil:
		return routeAbsent
	case resident.disposal != nil:
		return routeAfterDisposal
	case fenced:
		return routeDisposeFenced
	}
	return routeResident
}

// routeOf decides the route of o's child, whose epoch here is a (or nil).
func (m *core) routeOf(o *op, a *activation) route {
	return decideRoute(a, m.st.elsewhere[o.childID], a != nil && m.fenced(a))
}

// disposeFenced opens the disposal of a fenced epoch, reported as a
// settlement (its failure is logged).
func (m *core) disposeFenced(a *activation) *disposal {
	d := m.dispose(a)
	a.settling = true
	return d
}

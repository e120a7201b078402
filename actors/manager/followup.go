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

// A follow-up takes these steps in the core, each on one message (this
// file, top to bottom, but for the two steps every admission shares):
//
//  1. followup (followupRequest): the DRAINING gate, then the child's
//     lock (lockAbandoned if the caller's context ends while queued).
//  2. route, holding the lock: by what the core knows of the child
//     (decideRoute), one of
//     - resident, running or waiting: submit, the final admission
//     (admission.go: accept, then commitAdmission and admitted with a
//     durable inbox), whose await-free last step checks the parent's
//     authority; a waiting child wakes as a running one queues;
//     - absent: a cold resume (resume.go: resumeLoaded, opened,
//     startEmitted, pendingRead, then submit);
//     - elsewhere: admitElsewhere, below, to the durable inbox of the
//     process holding the child (admittedElsewhere);
//     - after a disposal (one open, or one opened now for a fenced
//     epoch): the lock given up, the disposal awaited
//     (disposalSettled), then step 1 again (retry).

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

// resumeElsewhere remembers that another process holds the child and
// commits the follow-up to its durable inbox.
func (m *core) resumeElsewhere(o *op) {
	m.st.elsewhere[o.childID] = true
	m.admitElsewhere(o)
}

// admitElsewhere accepts a follow-up for a child another process holds:
// the caller's context, the DRAINING gate and the parent's authority
// here, then the message committed to the child's durable inbox off the
// actor (the store checks the parent's live epoch, the child's header
// and the drain cut-off in that step, and the commit wakes the holder).
// o's MessageID is the committed row's (admittedElsewhere).
func (m *core) admitElsewhere(o *op) {
	if err := m.admission(o, durableParent{}); err != nil { // the store checks the header
		m.finish(o, "", err)
		return
	}
	o.msg = event.UserMessage{Content: o.content, Source: o.source, Role: "user", ID: m.env.newID()}
	m.emit(commitElsewhere{o})
}

// admitElsewhereOff commits the admission (off the actor).
func (m *Manager) admitElsewhereOff(o *op) {
	admission, err := admissionOf(o)
	if err == nil {
		_, err = m.inbox.Admit(o.ctx, o.childID, admission)
	}
	m.send(admittedElsewhere{o, err})
}

// admittedElsewhere reports the commit.
func (m *core) admittedElsewhere(msg admittedElsewhere) {
	if msg.err != nil {
		m.finish(msg.op, "", notAdmitted(msg.childID, msg.err))
		return
	}
	m.finish(msg.op, msg.msg.ID, nil)
}

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
	return call(m, ctx, func(ctx context.Context, reply func(string, error)) {
		m.followup(ctx, followupReq{p, childID, content, source}, reply)
	})
}

type followupReq struct {
	parent  *parent.Handle
	childID string
	content []event.Block
	source  event.Source
}

// followup routes one follow-up inside the actor.
func (m *Manager) followup(ctx context.Context, req followupReq, reply func(string, error)) {
	if err := m.admit(req.parent); err != nil {
		reply("", err)
		return
	}
	m.withChildLock(ctx, req.childID, func(release func()) {
		a := m.st.activations[req.childID]
		switch m.routeOf(a, req.childID) {
		case routeElsewhere:
			m.admitElsewhere(ctx, req, func(id string, err error) {
				release()
				reply(id, err)
			})
		case routeAbsent:
			m.coldResume(ctx, req, func(id string, err error) {
				release()
				reply(id, err)
			})
		case routeAfterDisposal:
			release()
			m.retryAfterDisposal(ctx, req, a.disposal, reply)
		case routeDisposeFenced: // its lease moved on: dispose it, then cold-resume under a new one
			d := m.disposeFenced(a)
			release()
			m.retryAfterDisposal(ctx, req, d, reply)
		case routeResident:
			m.submit(ctx, a, req.content, req.source, req.parent, func(id string, err error) {
				release()
				reply(id, err)
			})
		}
	}, func(err error) { reply("", err) })
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

// routeOf decides the route of childID, whose epoch here is a (or nil).
func (m *Manager) routeOf(a *activation, childID string) route {
	return decideRoute(a, m.st.elsewhere[childID], a != nil && fenced(a))
}

// disposeFenced opens the disposal of a fenced epoch, reported as a
// settlement (its failure is logged).
func (m *Manager) disposeFenced(a *activation) *disposal {
	d := m.dispose(a)
	a.settling = true
	return d
}

// retryAfterDisposal waits for an open disposal (its error ignored), then
// routes the follow-up again, which cold-resumes the child.
func (m *Manager) retryAfterDisposal(ctx context.Context, req followupReq, d *disposal, reply func(string, error)) {
	async(m, func() struct{} {
		select {
		case <-d.done:
		case <-ctx.Done():
		}
		return struct{}{}
	}, func(struct{}) {
		if err := m.admit(req.parent); err != nil {
			reply("", err)
			return
		}
		if err := ctx.Err(); err != nil {
			reply("", err)
			return
		}
		m.followup(ctx, req, reply)
	})
}

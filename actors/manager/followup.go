package manager

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
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

// errLiveUnmanaged is the cause of NOT_RESUMABLE for an id that is live
// but has no Activation: its log belongs to a running session.
var errLiveUnmanaged = errors.New("the session is live outside the continuation manager")

// coldResume rebuilds an absent child from its log: the
// repairing load off the actor (a failure is NOT_RESUMABLE "unavailable"),
// the caller's context and the DRAINING gate, authorization #1 against the
// durable header, the descriptor folded from the own suffix (a malformed
// one is returned unwrapped, matching fault.DescriptorCorrupt; none or another
// version is NOT_RESUMABLE), then materialization with the descriptor's
// route from that same loaded log (the log is read once: the agent's
// conversation comes from it; on a store other processes write, read
// again once the lease is held) and the admission of the message
// (authorization #2). With a store that wakes, a child another process
// holds gets the message through its durable inbox (admitElsewhere).
func (m *Manager) coldResume(ctx context.Context, req followupReq, done func(string, error)) {
	store := m.sessions.Store()
	if store == nil {
		done("", persistenceUnavailable())
		return
	}
	if m.sessions.Get(req.childID) != nil || m.registry.Get(req.childID) != nil {
		done("", unavailable(req.childID, errLiveUnmanaged))
		return
	}
	type loaded struct {
		log *session.Log
		err error
	}
	async(m, func() loaded {
		log, err := store.Load(ctx, req.childID)
		return loaded{log, err}
	}, func(l loaded) {
		if m.elsewhere(l.err) { // its open turn runs in another process
			m.st.elsewhere[req.childID] = true
			m.admitElsewhere(ctx, req, done)
			return
		}
		if l.err != nil {
			done("", unavailable(req.childID, l.err))
			return
		}
		d, err := m.admitResume(ctx, req, l.log)
		if err != nil {
			done("", err)
			return
		}
		ms := materializeSpec{
			childID: req.childID, provider: d.Provider, parent: req.parent,
			resume: resumeSpec(d), loaded: m.reusable(l.log),
		}
		m.materialize(ctx, ms, func(a *activation, err error) {
			if m.elsewhere(err) { // another process holds it
				m.st.elsewhere[req.childID] = true
				m.admitElsewhere(ctx, req, done)
				return
			}
			if err != nil {
				done("", err)
				return
			}
			m.replayPending(ctx, a, func(err error) {
				if err != nil {
					m.submitFailed(a, unavailable(req.childID, err), done)
					return
				}
				m.submitMaterialized(ctx, a, req.content, req.source, req.parent, done)
			})
		})
	})
}

// resumeSpec rebuilds the child from its descriptor alone: the route and
// composition it declared, nothing it did not (no max tokens; no runtime
// depth: the header's delegationDepth is the floor).
func resumeSpec(d descriptor.Data) parent.Spec {
	return parent.Spec{Provider: d.AgentProvider, Model: d.AgentModel, Persona: d.Persona, ToolFilter: d.ToolFilter}
}

// admitResume checks a loaded log before anything is rebuilt and returns
// its continuation state.
func (m *Manager) admitResume(ctx context.Context, req followupReq, log *session.Log) (descriptor.Data, error) {
	if err := m.admitWithContext(ctx, req.parent); err != nil {
		return descriptor.Data{}, err
	}
	if err := m.authorize(req.parent, req.childID, log.Header.ParentSession); err != nil {
		return descriptor.Data{}, err
	}
	return continuationState(req.childID, log)
}

// continuationState parses the first descriptor of the log's own suffix,
// the events from its seed length on (a fork seed's replayed ancestor
// descriptor is ignored; later descriptors are not looked at). A log
// without one, or with one of another version, has no continuation state
// (NOT_RESUMABLE); a malformed one is fault.DescriptorCorrupt.
func continuationState(childID string, log *session.Log) (descriptor.Data, error) {
	raw, ok := ownDescriptor(log)
	if !ok {
		return descriptor.Data{}, noContinuationState(childID)
	}
	d, err := descriptor.Parse(raw)
	switch {
	case errors.Is(err, fault.DescriptorUnsupported):
		return descriptor.Data{}, noContinuationState(childID)
	case err != nil:
		return descriptor.Data{}, err
	}
	return d, nil
}

// ownDescriptor is the payload of the first descriptor event at or after
// the log's seed length (a negative one counts as 0).
func ownDescriptor(log *session.Log) (json.RawMessage, bool) {
	seedLength := 0
	if log.Header.SeedLength != nil {
		seedLength = *log.Header.SeedLength
	}
	for _, e := range log.Events[min(max(seedLength, 0), len(log.Events)):] {
		if e.Type == vocab.TypeSubagentDescriptor {
			return e.Data, true
		}
	}
	return nil, false
}

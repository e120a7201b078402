package manager

import (
	"context"
	"errors"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// submit admits o's message to its epoch o.a. Without a durable inbox
// the admission is its final step alone (admitFinal), with no wait in
// it. With one, the message is first committed to the store's inbox off
// the actor, once nothing the actor knows makes the commit pointless
// (commitGate); the store checks the exact live parent's epoch, the
// child's header and the drain cut-off in the commit's own statement.
// The final step runs when the commit is back (admitted), and a committed
// message it refuses is discarded from the durable inbox; o's MessageID is
// the committed row's. o holds the child's lock, so admissions to one
// child commit in the order they are queued. It ends in submitted.
func (m *core) submit(o *op) {
	o.msg = event.UserMessage{Content: o.content, Source: o.source, Role: "user", ID: m.env.newID()}
	if !m.durable {
		if err := m.admitFinal(o); err != nil {
			m.submitted(o, "", err)
			return
		}
		m.submitted(o, o.msg.ID, nil)
		return
	}
	if err := m.commitGate(o); err != nil {
		m.submitted(o, "", err)
		return
	}
	m.emit(commitAdmission{o})
}

// admission is an op's admission before its first wait (the child's
// materialization, or the commit to the durable inbox of a child another
// process holds): the caller's context, the DRAINING gate, then the
// parent's authority against the child's header as this process read it
// (header).
func (m *core) admission(o *op, header durableParent) error {
	if err := m.admitWithContext(o.ctx, o.parent); err != nil {
		return err
	}
	return m.authorize(o.parent, o.childID, header)
}

// authorize is the authority decision, the only one. It is made at the
// op's admission before its first wait (admission) and again in its
// final admission step, with no wait after it (admitFinal); an epoch an
// op materialized is admitted by the same check when it is published
// (ownedBy), the await-free step before it can run anything. p must be
// the registry's exact live entry for its id (a handle whose agent left
// the registry, an ended epoch perhaps replaced by a newer one, is
// UNAUTHORIZED: a child it owned would run pinned by no epoch), and the
// child's durable header, when this process read it, must name p's id (a
// header naming none is a top-level session's: no one's child). An
// unread header is a child another process holds: the store checks it
// in the admission's own statement.
func (m *core) authorize(p *parent.Handle, childID string, durable durableParent) error {
	if !m.env.isLive(p) {
		return notExactParent(childID)
	}
	if durable.read && durable.id != m.env.idOf(p) {
		return foreignParent(childID)
	}
	return nil
}

// durableParent is what this process read of a child's durable header:
// the parent session it names ("" for none), or nothing (unread).
type durableParent struct {
	id   string
	read bool
}

// readParent is a header read here that names id as the parent.
func readParent(id string) durableParent { return durableParent{id: id, read: true} }

// admitOff commits o's message to its child's durable inbox (off the
// actor).
func (m *Manager) admitOff(o *op) {
	admission, err := admissionOf(o)
	if err == nil {
		_, err = m.inbox.Admit(o.ctx, o.childID, admission)
	}
	m.send(admitted{o, err})
}

// admissionOf is o's message as the durable inbox stores it, from o's
// sender's epoch.
func admissionOf(o *op) (session.Admission, error) {
	body, err := vocab.Encode(o.msg)
	if err != nil {
		return session.Admission{}, err
	}
	p := o.parent
	return session.Admission{MessageID: o.msg.ID, From: p.ID(), FromEpoch: p.Session().Epoch(), Body: body}, nil
}

// admitted is the final step after the durable commit.
func (m *core) admitted(msg admitted) {
	o := msg.op
	if msg.err != nil {
		m.submitted(o, "", notAdmitted(o.childID, msg.err))
		return
	}
	if err := m.admitFinal(o); err != nil {
		m.discardCommitted(o, err)
		return
	}
	m.submitted(o, o.msg.ID, nil)
}

// submitted ends o's admission: a fresh epoch whose admission failed is
// disposed (its own error swallowed) before o reports the failure.
func (m *core) submitted(o *op, id string, err error) {
	if err != nil && o.fresh {
		m.disposeFresh(o, err)
		return
	}
	m.finish(o, id, err)
}

// notAdmitted maps a refused durable admission: the store's UNAUTHORIZED
// and DRAINING as they are, a child the store does not hold as
// NOT_RESUMABLE, anything else (the store is down) as DURABILITY_FAILED.
func notAdmitted(childID string, err error) error {
	switch {
	case errors.Is(err, fault.Unauthorized), errors.Is(err, fault.Draining):
		return err
	case errors.Is(err, session.ErrNotFound):
		return unavailable(childID, err)
	}
	return newError(fault.DurabilityFailed, err, "subagent %q: the follow-up was not admitted to the durable inbox: %s", childID, err)
}

// discardCommitted settles o's committed message, which the child will
// not run, off the actor; o's answer is refusal (commitDiscarded).
func (m *core) discardCommitted(o *op, refusal error) {
	m.emit(discardCommit{o, refusal})
}

// discardOff marks o's message discarded in the durable inbox (off the
// actor).
func (m *Manager) discardOff(o *op, refusal error) {
	epoch := o.a.handle.Session().Epoch()
	err := m.inbox.Discard(context.Background(), o.childID, epoch, []string{o.msg.ID})
	m.send(commitDiscarded{o, refusal, err})
}

// commitDiscarded reports a refused committed message.
func (m *core) commitDiscarded(msg commitDiscarded) {
	if msg.err != nil {
		m.logger.Warn("subagent: a refused follow-up stays in the durable inbox", "child", msg.a.childID, "messageId", msg.msg.ID, "err", msg.err)
	}
	m.submitted(msg.op, "", msg.refusal)
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

// admitFinal is the final admission step, with no wait in it: the
// commit gate again (the caller's context, the DRAINING gate, the
// epoch's disposal), the parent's authority against the live child's
// header, the child's log not failed, the parent's ownership, then o.msg
// recorded as accepted before the inbox accepts it.
func (m *core) admitFinal(o *op) error {
	a := o.a
	if err := m.admissionOpen(o); err != nil {
		return err
	}
	if err := m.authorize(o.parent, a.childID, readParent(m.env.headerParent(a.handle))); err != nil {
		return err
	}
	if err := m.logIntact(a); err != nil {
		return err
	}
	if err := m.acquireOwnership(o.parent, a); err != nil {
		return err
	}
	a.accepted[o.msg.ID] = true
	return m.enqueue(a, o.msg)
}

// commitGate refuses a durable commit the final step would refuse for a
// reason the actor knows already (admitFinal checks them all again).
func (m *core) commitGate(o *op) error {
	if err := m.admissionOpen(o); err != nil {
		return err
	}
	return m.logIntact(o.a)
}

// admissionOpen is the part of an admission's checks, but authority,
// that a wait can change: the caller's context, the DRAINING gate and the
// epoch's disposal.
func (m *core) admissionOpen(o *op) error {
	if err := m.admitWithContext(o.ctx, o.parent); err != nil {
		return err
	}
	if o.a.disposal != nil {
		return activationClosing(o.a.childID)
	}
	return nil
}

// logIntact refuses a message to a child whose session log failed: it
// could never be logged.
func (m *core) logIntact(a *activation) error {
	if err := m.env.writeFailure(a.handle); err != nil {
		return logFailed(a.childID, err)
	}
	return nil
}

// enqueue hands an accepted message to the child's inbox.
func (m *core) enqueue(a *activation, msg event.UserMessage) error {
	if err := m.env.post(a.handle, msg); err != nil {
		delete(a.accepted, msg.ID)
		return err
	}
	a.enqueued[msg.ID] = true
	return nil
}

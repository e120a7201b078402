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

// submit is the final admission of o's message to its epoch o.a. Without
// a durable inbox it is one span with no wait in it (accept, then
// enqueue). With one, the message is accepted (the same checks),
// committed to the store's inbox off the actor (the store checks the
// exact live parent's epoch and the drain cut-off in the same step;
// admitted), checked again in the actor (a drain or disposal may have
// opened meanwhile: the committed row is then discarded) and handed to
// the child's inbox; o's MessageID is the committed row's. o holds the
// child's lock, so admissions to one child commit in the order they are
// queued. It ends in submitted.
func (m *core) submit(o *op) {
	msg, err := m.accept(o.ctx, o.a, o.content, o.source, o.parent)
	if err != nil {
		m.submitted(o, "", err)
		return
	}
	if !m.durable {
		id, err := m.enqueue(o.a, msg)
		m.submitted(o, id, err)
		return
	}
	o.msg = msg
	m.emit(commitAdmission{o})
}

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

// admitted is the await-free step after the durable commit: the checks
// a wait can change, then the message handed to the epoch.
func (m *core) admitted(msg admitted) {
	o, a := msg.op, msg.op.a
	if msg.err != nil {
		delete(a.accepted, o.msg.ID)
		m.submitted(o, "", notAdmitted(a.childID, msg.err))
		return
	}
	if err := m.recheck(o.ctx, a, o.parent); err != nil {
		delete(a.accepted, o.msg.ID)
		m.discardCommitted(o, err)
		return
	}
	id, err := m.enqueue(a, o.msg)
	if err != nil {
		m.discardCommitted(o, err)
		return
	}
	m.submitted(o, id, nil)
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

// accept is the final admission span, with no wait in it: the caller's
// context, the DRAINING gate, the Activation's disposal, the parent's
// authority against the live child's header (recheck), the child's log
// not failed, parent ownership, then the message under a new id,
// recorded as accepted before the inbox accepts it.
func (m *core) accept(ctx context.Context, a *activation, content []event.Block, source event.Source, p *parent.Handle) (event.UserMessage, error) {
	if err := m.recheck(ctx, a, p); err != nil {
		return event.UserMessage{}, err
	}
	if err := m.env.writeFailure(a.handle); err != nil {
		return event.UserMessage{}, logFailed(a.childID, err)
	}
	if err := m.acquireOwnership(p, a); err != nil {
		return event.UserMessage{}, err
	}
	id := m.env.newID()
	a.accepted[id] = true
	return event.UserMessage{Content: content, Source: source, Role: "user", ID: id}, nil
}

// recheck is the part of the admission checks that a wait can change:
// the caller's context, the DRAINING gate, the disposal and the parent's
// authority.
func (m *core) recheck(ctx context.Context, a *activation, p *parent.Handle) error {
	if err := m.admitWithContext(ctx, p); err != nil {
		return err
	}
	if a.disposal != nil {
		return activationClosing(a.childID)
	}
	return m.authorize(p, a.childID, readParent(m.env.headerParent(a.handle)))
}

// enqueue hands an accepted message to the child's inbox.
func (m *core) enqueue(a *activation, msg event.UserMessage) (string, error) {
	if err := m.env.post(a.handle, msg); err != nil {
		delete(a.accepted, msg.ID)
		return "", err
	}
	a.enqueued[msg.ID] = true
	return msg.ID, nil
}

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

// submit is the final admission of a message to a: without a durable
// inbox, submitAdmitted. With one, the message is accepted (the checks of
// submitAdmitted), committed to the store's inbox off the actor (the
// store checks the exact live parent's epoch and the drain cut-off in the
// same step), checked again in the actor (a drain or disposal may have
// opened meanwhile: the committed row is then discarded) and handed to
// the child's inbox; done gets the MessageID once the row is committed.
// The caller holds the child's lock, so admissions to one child commit
// in the order they are queued.
func (m *Manager) submit(ctx context.Context, a *activation, content []event.Block, source event.Source, p *parent.Handle, done func(string, error)) {
	if m.inbox == nil {
		done(m.submitAdmitted(ctx, a, content, source, p))
		return
	}
	msg, err := m.accept(ctx, a, content, source, p)
	if err != nil {
		done("", err)
		return
	}
	body, err := vocab.Encode(msg)
	if err != nil {
		delete(a.accepted, msg.ID)
		done("", err)
		return
	}
	admission := session.Admission{MessageID: msg.ID, From: p.ID(), FromEpoch: p.Session().Epoch(), Body: body}
	async(m, func() error {
		_, err := m.inbox.Admit(ctx, a.childID, admission)
		return err
	}, func(err error) {
		if err != nil {
			delete(a.accepted, msg.ID)
			done("", notAdmitted(a.childID, err))
			return
		}
		if err := m.recheck(ctx, a, p); err != nil {
			delete(a.accepted, msg.ID)
			m.discardCommitted(a, msg.ID, func() { done("", err) })
			return
		}
		id, err := m.enqueue(a, msg)
		if err != nil {
			m.discardCommitted(a, msg.ID, func() { done("", err) })
			return
		}
		done(id, nil)
	})
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

// discardCommitted settles a committed message the child will not run
// (off the actor), then runs then in the actor.
func (m *Manager) discardCommitted(a *activation, messageID string, then func()) {
	epoch := a.handle.Session().Epoch()
	async(m, func() error {
		return m.inbox.Discard(context.Background(), a.childID, epoch, []string{messageID})
	}, func(err error) {
		if err != nil {
			m.logger.Warn("subagent: a refused follow-up stays in the durable inbox", "child", a.childID, "messageId", messageID, "err", err)
		}
		then()
	})
}

// replayPending hands a child the messages its durable inbox holds
// unclaimed that this epoch has not been handed yet (accepted by an
// earlier epoch that never ran them: a crash, a fence; or by another
// process, which woke this one), oldest first, before anything newer;
// then runs in the actor with the store's error.
func (m *Manager) replayPending(ctx context.Context, a *activation, then func(error)) {
	if m.inbox == nil {
		then(nil)
		return
	}
	type read struct {
		pending []session.Admission
		err     error
	}
	async(m, func() read {
		pending, err := m.inbox.Pending(ctx, a.childID)
		return read{pending, err}
	}, func(r read) {
		if r.err != nil {
			then(r.err)
			return
		}
		for _, p := range r.pending {
			msg, err := vocab.DecodeAs[event.UserMessage](vocab.TypeUserMessage, p.Body)
			if err != nil {
				then(err)
				return
			}
			if a.enqueued[msg.ID] {
				continue // this epoch has it already (its claim is not committed yet)
			}
			a.accepted[msg.ID] = true
			if _, err := m.enqueue(a, msg); err != nil {
				then(err)
				return
			}
		}
		then(nil)
	})
}

// submitFailed disposes a freshly materialized child whose admission
// failed, then reports err.
func (m *Manager) submitFailed(a *activation, err error, done func(string, error)) {
	d := m.dispose(a)
	async(m, func() struct{} { <-d.done; return struct{}{} }, func(struct{}) { done("", err) })
}

// settleDiscarded marks in the durable inbox the message a teardown
// discarded unrun, so that no later epoch replays it. It runs on the
// publishing goroutine of the child's inbox events, before the child's
// lease is released. A fenced child's discards are not marked: the epoch
// that took its lease over replays them.
func (m *Manager) settleDiscarded(a *activation, messageID string) {
	if m.inbox == nil || !a.disposing.Load() || fenced(a) {
		return
	}
	epoch := a.handle.Session().Epoch()
	if err := m.inbox.Discard(context.Background(), a.childID, epoch, []string{messageID}); err != nil {
		m.logger.Warn("subagent: a discarded follow-up stays in the durable inbox", "child", a.childID, "messageId", messageID, "err", err)
	}
}

package manager

import (
	"encoding/json"
	"errors"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// A cold resume rebuilds an absent child from its log, for a follow-up
// (followup.go's route), in these steps (each runs in the actor; the I/O
// between them runs off it and comes back as a message):
//
//  1. coldResume: persistence present, the id not live outside the
//     manager; the repairing load starts off the actor.
//  2. resumeLoaded (the load's result): a child another process holds
//     gets the message through its durable inbox (resumeElsewhere); a
//     failed load is NOT_RESUMABLE; then the caller's context, the
//     DRAINING gate, the parent's authority against the durable header
//     and the descriptor folded from the log's own suffix (a malformed
//     one is returned unwrapped, matching fault.DescriptorCorrupt; none
//     or another version is NOT_RESUMABLE); materialization
//     (materialize.go) starts with the descriptor's route from that same
//     log (read once; on a store other processes write, read again once
//     the lease is held). Another process that took the lease first
//     sends the follow-up elsewhere too (notMaterialized).
//  3. replayPending, once materialized: the messages the
//     child's durable inbox holds unclaimed are handed to the new epoch
//     first.
//  4. submit (admission.go), once replayed: the follow-up's own
//     admission, whose final step checks authority again; a failure
//     disposes the fresh epoch first.

// errLiveUnmanaged is the cause of NOT_RESUMABLE for an id that is live
// but has no Activation: its log belongs to a running session.
var errLiveUnmanaged = errors.New("the session is live outside the continuation manager")

// coldResume is step 1.
func (m *core) coldResume(o *op) {
	if !m.env.hasStore() {
		m.finish(o, "", persistenceUnavailable())
		return
	}
	if m.env.sessionLive(o.childID) {
		m.finish(o, "", unavailable(o.childID, errLiveUnmanaged))
		return
	}
	m.emit(loadLog{o})
}

// loadOff is the repairing load of a cold resume (off the actor).
func (m *Manager) loadOff(o *op) {
	log, err := m.sessions.Store().Load(o.ctx, o.childID)
	m.send(resumeLoaded{o, log, err})
}

// resumeLoaded is step 2.
func (m *core) resumeLoaded(msg resumeLoaded) {
	o := msg.op
	if m.elsewhere(msg.err) { // its open turn runs in another process
		m.resumeElsewhere(o)
		return
	}
	if msg.err != nil {
		m.finish(o, "", unavailable(o.childID, msg.err))
		return
	}
	d, err := m.admitResume(o, msg.log)
	if err != nil {
		m.finish(o, "", err)
		return
	}
	o.ms = materializeSpec{
		childID: o.childID, provider: d.Provider, parent: o.parent,
		resume: resumeSpec(d), loaded: m.reusable(msg.log),
	}
	m.materialize(o)
}

// replayPending hands o's epoch the messages its durable inbox holds
// unclaimed that the epoch has not been handed yet (accepted by an
// earlier epoch that never ran them: a crash, a fence; or by another
// process, which woke this one), oldest first, before anything newer.
// The read runs off the actor (pendingRead); it ends in replayed.
func (m *core) replayPending(o *op) {
	if !m.durable {
		m.replayed(o, nil)
		return
	}
	m.emit(readPending{o})
}

// readPendingOff reads the child's unclaimed messages (off the actor).
func (m *Manager) readPendingOff(o *op) {
	pending, err := m.inbox.Pending(o.ctx, o.childID)
	m.send(pendingRead{o, pending, err})
}

// pendingRead hands the read messages to o's epoch.
func (m *core) pendingRead(msg pendingRead) {
	o, a := msg.op, msg.op.a
	if msg.err != nil {
		m.replayed(o, msg.err)
		return
	}
	for _, p := range msg.pending {
		um, err := vocab.DecodeAs[event.UserMessage](vocab.TypeUserMessage, p.Body)
		if err != nil {
			m.replayed(o, err)
			return
		}
		if a.enqueued[um.ID] {
			continue // this epoch has it already (its claim is not committed yet)
		}
		a.accepted[um.ID] = true
		if err := m.enqueue(a, um); err != nil {
			m.replayed(o, err)
			return
		}
	}
	m.replayed(o, nil)
}

// replayed is o's next step once its epoch got its pending messages: a
// cold resume submits the follow-up (a failed replay is NOT_RESUMABLE);
// a wake is done.
func (m *core) replayed(o *op, err error) {
	switch o.kind {
	case opFollowup:
		if err != nil {
			m.disposeFresh(o, unavailable(o.childID, err))
			return
		}
		m.submit(o)
	case opWake:
		m.submitted(o, "", err)
	}
}

// resumeSpec rebuilds the child from its descriptor alone: the route and
// composition it declared, nothing it did not (no max tokens; no runtime
// depth: the header's delegationDepth is the floor).
func resumeSpec(d descriptor.Data) parent.Spec {
	return parent.Spec{Provider: d.AgentProvider, Model: d.AgentModel, Persona: d.Persona, ToolFilter: d.ToolFilter}
}

// admitResume checks a loaded log before anything is rebuilt and returns
// its continuation state.
func (m *core) admitResume(o *op, log *session.Log) (descriptor.Data, error) {
	if err := m.admission(o, readParent(log.Header.ParentSession)); err != nil {
		return descriptor.Data{}, err
	}
	return continuationState(o.childID, log)
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

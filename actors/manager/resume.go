package manager

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// A cold resume rebuilds an absent child from its log, for a follow-up,
// in these steps (each runs in the actor; the I/O between them runs off
// it and comes back as a message):
//
//  1. coldResume: persistence present, the id not live outside the
//     manager; the repairing load starts off the actor.
//  2. resumeLoaded (the load's result): a child another process holds
//     gets the message through its durable inbox (admitElsewhere); a
//     failed load is NOT_RESUMABLE; then the caller's context, the
//     DRAINING gate, authorization #1 against the durable header and the
//     descriptor folded from the log's own suffix (a malformed one is
//     returned unwrapped, matching fault.DescriptorCorrupt; none or
//     another version is NOT_RESUMABLE); materialization starts with
//     the descriptor's route from that same log (read once; on a store
//     other processes write, read again once the lease is held).
//  3. resumeMaterialized: the messages the child's durable inbox holds
//     unclaimed are handed to the new epoch first (replayPending).
//  4. resumeReplayed: the follow-up's own admission, whose final step
//     is authorization #2 (submitMaterialized).

// resumeOp is one cold resume in flight.
type resumeOp struct {
	ctx  context.Context
	req  followupReq
	done func(string, error)
}

// resumeLoaded is the result of a cold resume's load.
type resumeLoaded struct {
	op  *resumeOp
	log *session.Log
	err error
}

// errLiveUnmanaged is the cause of NOT_RESUMABLE for an id that is live
// but has no Activation: its log belongs to a running session.
var errLiveUnmanaged = errors.New("the session is live outside the continuation manager")

// coldResume is step 1.
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
	op := &resumeOp{ctx: ctx, req: req, done: done}
	go func() {
		log, err := store.Load(ctx, req.childID)
		m.send(resumeLoaded{op, log, err})
	}()
}

// resumeLoaded is step 2.
func (m *Manager) resumeLoaded(msg resumeLoaded) {
	op := msg.op
	if m.elsewhere(msg.err) { // its open turn runs in another process
		m.resumeElsewhere(op)
		return
	}
	if msg.err != nil {
		op.done("", unavailable(op.req.childID, msg.err))
		return
	}
	d, err := m.admitResume(op.ctx, op.req, msg.log)
	if err != nil {
		op.done("", err)
		return
	}
	ms := materializeSpec{
		childID: op.req.childID, provider: d.Provider, parent: op.req.parent,
		resume: resumeSpec(d), loaded: m.reusable(msg.log),
	}
	m.materialize(op.ctx, ms, op.materialized(m))
}

// materialized is step 3, as materialize's continuation.
func (op *resumeOp) materialized(m *Manager) func(*activation, error) {
	return func(a *activation, err error) {
		switch {
		case m.elsewhere(err): // another process took the lease first
			m.resumeElsewhere(op)
		case err != nil:
			op.done("", err)
		default:
			m.replayPending(op.ctx, a, func(err error) { m.resumeReplayed(op, a, err) })
		}
	}
}

// resumeReplayed is step 4.
func (m *Manager) resumeReplayed(op *resumeOp, a *activation, err error) {
	if err != nil {
		m.submitFailed(a, unavailable(op.req.childID, err), op.done)
		return
	}
	m.submitMaterialized(op.ctx, a, op.req.content, op.req.source, op.req.parent, op.done)
}

// resumeElsewhere remembers that another process holds the child and
// commits the follow-up to its durable inbox.
func (m *Manager) resumeElsewhere(op *resumeOp) {
	m.st.elsewhere[op.req.childID] = true
	m.admitElsewhere(op.ctx, op.req, op.done)
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

package manager

import (
	"context"
	"errors"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/session"
)

// materializeSpec says how to build one epoch: a fresh create (create set)
// or a cold resume (resume route).
type materializeSpec struct {
	childID  string
	provider string         // lifecycle provenance: spec.Provider or descriptor.Provider
	parent   *parent.Handle // nil: a woken child whose parent is not live here
	// under is the parent when it is a resident Activation here: the
	// child's actor is spawned under the parent's (parent.Spec.Under), so
	// protoactor stops the parent's actor only after the child's. Nil
	// (the parent top-level, elsewhere or absent): the child is the root
	// of its own local forest. A top-level (or one-shot) agent has no
	// Activation and stays outside the waiting graph: its disposal must
	// neither wait for its continuable children nor stop them, and a
	// protoactor parent's stop does both.
	under  *parent.Handle
	create *parent.CreateSpec
	resume parent.Spec
	// loaded is the log a cold resume read and checked, rebuilt without a
	// second read; nil: the resume acquires the lease, then loads the log.
	loaded *session.Log
}

// open creates or resumes the child's agent, owned by ms.parent; it runs
// off the actor.
func (m *Manager) open(ctx context.Context, ms materializeSpec) (*parent.Handle, error) {
	if ms.create != nil {
		create := *ms.create
		create.Spec.Owner, create.Spec.Under = ms.parent, ms.under
		return m.rt.StartAgent(ctx, create)
	}
	resume := ms.resume
	resume.Owner, resume.Under = ms.parent, ms.under
	if ms.loaded == nil {
		return m.rt.ResumeAgent(ctx, ms.childID, resume)
	}
	return m.rt.ResumeAgentLoaded(ctx, ms.loaded, resume)
}

// materialize builds o's epoch (o.ms) and publishes it: the DRAINING
// gate, the parent's live lineage tracked as a materialization (drains
// wait for it), the caller's context, the create or resume off the actor
// (opened), the Activation installed at once, then — with no wait in
// between — the caller's context, the DRAINING gate, the parent's
// authority and ownership (publish), and last subagent/start
// (startEmitted). A failure after the handle transfer rolls the
// unpublished Activation back (handle disposed, no end edge, no flush).
// It ends in materialized or notMaterialized.
func (m *core) materialize(o *op) {
	if err := m.admit(o.ms.parent); err != nil {
		m.notMaterialized(o, err)
		return
	}
	var lineage []*parent.Handle
	if o.ms.parent != nil {
		lineage = m.env.liveLineage(o.ms.parent)
	}
	o.ms.under = m.residentOwner(o.ms.parent)
	o.mat = &materialization{lineage: lineage, done: make(chan struct{})}
	m.st.materializations[o.mat] = struct{}{}
	if err := o.ctx.Err(); err != nil {
		m.notMaterialized(o, err)
		return
	}
	m.emit(openEpoch{o})
}

// openOff creates or resumes the epoch (off the actor); a resume checks
// for a drain in force once it holds the lease.
func (m *Manager) openOff(o *op, ms materializeSpec) {
	h, err := m.open(o.ctx, ms)
	var drained error
	if err == nil && ms.create == nil {
		drained = m.settleIfDrained(o.ctx, ms.childID, h)
	}
	m.send(opened{o, h, drained, err})
}

// opened installs the epoch the open created and publishes it.
func (m *core) opened(msg opened) {
	o := msg.op
	if msg.err != nil && o.ms.under != nil && errors.Is(msg.err, fault.ActivationClosing) {
		msg.err = parentClosing(m.env.idOf(o.ms.parent)) // the parent's actor began stopping
	}
	if msg.err != nil {
		m.notMaterialized(o, msg.err)
		return
	}
	o.a = m.install(o.ms, msg.h, o.mat.lineage)
	if msg.drained != nil {
		m.rollbackUnpublished(o, msg.drained)
		return
	}
	m.publish(o)
}

// materialized is the end of o's materialization: the next step of its
// kind.
func (m *core) materialized(o *op) {
	m.endMaterialization(o)
	o.fresh = true
	switch o.kind {
	case opStart:
		m.submit(o)
	case opFollowup, opWake:
		m.replayPending(o)
	}
}

// notMaterialized is the end of a materialization that failed with err:
// a follow-up whose child another process took first goes to its durable
// inbox; anything else is o's verdict.
func (m *core) notMaterialized(o *op, err error) {
	m.endMaterialization(o)
	o.a = nil
	if o.kind == opFollowup && m.elsewhere(err) {
		m.resumeElsewhere(o)
		return
	}
	m.finish(o, "", err)
}

// endMaterialization lets the drains waiting for o's materialization go.
func (m *core) endMaterialization(o *op) {
	if o.mat != nil {
		delete(m.st.materializations, o.mat)
		m.emit(materializationEnded{o.mat})
		o.mat = nil
	}
}

// settleIfDrained is a cold resume's drain check, once it holds the
// child's lease (so a cut-off recorded before the acquire is seen here,
// and one recorded after it finds this holder and waits for it): when a
// drain in force closes admission to the child (session.DrainCutoffs), every
// message pending in its durable inbox was admitted before that cut-off
// and is discarded under the new lease, as the drain discards what it
// finds queued, and the result is DRAINING: the epoch is rolled back
// unpublished. nil otherwise. It runs off the actor and blocks on the
// store.
func (m *Manager) settleIfDrained(ctx context.Context, childID string, h *parent.Handle) error {
	drains, ok := m.inbox.(session.DrainCutoffs)
	if !ok {
		return nil
	}
	drained, err := drains.Drained(ctx, childID)
	if err != nil {
		return unavailable(childID, err)
	}
	if !drained {
		return nil
	}
	pending, err := m.inbox.Pending(ctx, childID)
	if err == nil && len(pending) > 0 {
		ids := make([]string, len(pending))
		for i, p := range pending {
			ids[i] = p.MessageID
		}
		err = m.inbox.Discard(context.Background(), childID, h.Session().Epoch(), ids)
	}
	if err != nil {
		m.logger.Warn("subagent: a drained child's pending follow-ups stay in the durable inbox", "child", childID, "err", err)
	}
	return newError(fault.Draining, nil, "subagent %q: a drain below one of its ancestors is in force; it was not resumed", childID)
}

// install records a new Activation for h, with its ancestry (the child and
// the parent's live lineage at materialization).
func (m *core) install(ms materializeSpec, h *parent.Handle, lineage []*parent.Handle) *activation {
	m.st.epochs++
	a := &activation{
		childID:  ms.childID,
		provider: ms.provider,
		handle:   h,
		order:    m.st.epochs,
		ancestry: append([]*parent.Handle{h}, lineage...),
		accepted: map[string]bool{},
		enqueued: map[string]bool{},
		run:      RunInfo{RunID: m.env.newID(), Provider: ms.provider, ID: ms.childID, Local: true, ParentID: m.env.headerParent(h)},
		edge:     &edge{},
		under:    ms.under,
	}
	m.st.activations[ms.childID] = a
	delete(m.st.elsewhere, ms.childID)
	m.emit(observeEpoch{a})
	return a
}

// observeEpoch wires a freshly installed a to the actor: its inbox
// events, its fence (a fenced child is disposed at once, idle or not:
// checkSettled), the start of its actor's stop (an unexpected stop) and
// the release step of that stop (releaseStep). When that stop began
// already (its parent's actor stopped it first), the actor is told so,
// and released once the handle's own release is over.
func (m *Manager) observeEpoch(a *activation) {
	h := a.handle
	link := epochLink{m, a}
	h.Observe(link.event)
	h.Activation().OnFenced(link.fenced)
	h.Activation().OnStop(link.stopping)
	if !h.Releasing(link.release) {
		link.stopping()
		go func() {
			<-h.Disposed()
			var out teardownOutcome
			if err := h.Dispose(context.Background()); err != nil {
				out.failure = handleDisposalFailed(a.childID, err)
			}
			m.send(released{a, out})
		}()
	}
}

// residentOwner is p when p is the exact handle of a resident
// Activation whose disposal has not opened, else nil.
func (m *core) residentOwner(p *parent.Handle) *parent.Handle {
	if p == nil {
		return nil
	}
	if owner := m.st.activations[m.env.idOf(p)]; owner != nil && owner.handle == p && owner.disposal == nil {
		return p
	}
	return nil
}

// publish runs the post-transfer checks and emits subagent/start; any
// failure rolls the unpublished Activation back.
func (m *core) publish(o *op) {
	err := m.admitWithContext(o.ctx, o.ms.parent)
	if err == nil {
		err = m.ownedBy(o.ms.parent, o.a)
	}
	if err != nil {
		m.rollbackUnpublished(o, err)
		return
	}
	m.emit(emitStart{o})
}

// ownedBy gives a freshly installed Activation to its parent once the
// parent's authority holds; a woken child whose parent is not live here
// (nil) has no owner here. This is the admission's final step for the
// epoch itself, with no wait in it: it is the last step before the epoch
// can run anything (a cold resume or a wake hands it the messages its
// durable inbox holds before the follow-up's own final step, and a wake
// has none), so a parent that stopped being the live one while the
// epoch was built never gets it published.
func (m *core) ownedBy(p *parent.Handle, a *activation) error {
	if p == nil {
		return nil
	}
	if err := m.authorize(p, a.childID, readParent(m.env.headerParent(a.handle))); err != nil {
		return err
	}
	return m.acquireOwnership(p, a)
}

// emitStartOff takes the epoch's boundary (its first own event), then
// queues its start edge.
func (m *Manager) emitStartOff(o *op) {
	o.a.boundary = o.a.handle.Session().Len()
	m.pushEdge(startEdge{o, o.a.run, o.a.edge})
}

// startEmitted ends a materialization whose start edge was emitted, or
// rolls it back when that failed.
func (m *core) startEmitted(msg startEmitted) {
	if msg.err != nil {
		m.rollbackUnpublished(msg.op, msg.err)
		return
	}
	m.materialized(msg.op)
}

package manager

import (
	"context"
	"fmt"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/google/uuid"
)

// materializeSpec says how to build one epoch: a fresh create (create set)
// or a cold resume (resume route).
type materializeSpec struct {
	childID  string
	provider string         // lifecycle provenance: spec.Provider or descriptor.Provider
	parent   *parent.Handle // nil: a woken child whose parent is not live here
	create   *parent.CreateSpec
	resume   parent.Spec
	// loaded is the log a cold resume read and checked, rebuilt without a
	// second read; nil: the resume acquires the lease, then loads the log.
	loaded *session.Log
}

// open creates or resumes the child's agent, owned by ms.parent; it runs
// off the actor.
func (m *Manager) open(ctx context.Context, ms materializeSpec) (*parent.Handle, error) {
	if ms.create != nil {
		create := *ms.create
		create.Spec.Owner = ms.parent
		return m.rt.StartAgent(ctx, create)
	}
	resume := ms.resume
	resume.Owner = ms.parent
	if ms.loaded == nil {
		return m.rt.ResumeAgent(ctx, ms.childID, resume)
	}
	return m.rt.ResumeAgentLoaded(ctx, ms.loaded, resume)
}

// materialize builds an epoch and publishes it: the
// DRAINING gate, the parent's live lineage tracked as a materialization
// (drains wait for it), the create or resume off the actor, the Activation
// installed at once, then — with no wait in between — the caller's context,
// the DRAINING gate and parent ownership, and last subagent/start. A failure
// after the handle transfer rolls the unpublished Activation back (handle
// disposed, no end edge, no flush). done runs in the actor.
func (m *Manager) materialize(ctx context.Context, ms materializeSpec, done func(*activation, error)) {
	if err := m.admit(ms.parent); err != nil {
		done(nil, err)
		return
	}
	var lineage []*parent.Handle
	if ms.parent != nil {
		lineage = m.registry.LiveLineage(ms.parent)
	}
	mat := &materialization{lineage: lineage, done: make(chan struct{})}
	m.st.materializations[mat] = struct{}{}
	finish := func(a *activation, err error) {
		delete(m.st.materializations, mat)
		close(mat.done)
		done(a, err)
	}
	if err := ctx.Err(); err != nil {
		finish(nil, err)
		return
	}
	type opened struct {
		h       *parent.Handle
		drained error // a resume below a drain in force: DRAINING
		err     error
	}
	async(m, func() opened {
		h, err := m.open(ctx, ms)
		if err != nil || ms.create != nil {
			return opened{h: h, err: err}
		}
		return opened{h: h, drained: m.settleIfDrained(ctx, ms.childID, h)}
	}, func(o opened) {
		if o.err != nil {
			finish(nil, o.err)
			return
		}
		a := m.install(ms, o.h, mat.lineage)
		if o.drained != nil {
			m.rollbackUnpublished(a, func() { finish(nil, o.drained) })
			return
		}
		m.publish(ctx, ms, a, finish)
	})
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
func (m *Manager) install(ms materializeSpec, h *parent.Handle, lineage []*parent.Handle) *activation {
	m.st.epochs++
	a := &activation{
		childID:  ms.childID,
		provider: ms.provider,
		handle:   h,
		order:    m.st.epochs,
		ancestry: append([]*parent.Handle{h}, lineage...),
		accepted: map[string]bool{},
		enqueued: map[string]bool{},
		run:      RunInfo{RunID: uuid.NewString(), Provider: ms.provider, ID: ms.childID, Local: true, ParentID: h.Header().ParentSession},
		edge:     &edge{},
	}
	m.st.activations[ms.childID] = a
	delete(m.st.elsewhere, ms.childID)
	m.st.byPID[h.Activation().Ref()] = a
	h.Observe(func(e parent.Event) { m.onChildEvent(a, e) })
	// a fenced child is disposed at once, idle or not (checkSettled)
	h.Activation().OnFenced(func() { m.send(childFenced{a}) })
	m.self.Watch(h.Activation().Ref()) // an unexpected stop reaches onTerminated
	return a
}

// publish runs the post-transfer checks and emits subagent/start; any
// failure rolls the unpublished Activation back before finish reports it.
func (m *Manager) publish(ctx context.Context, ms materializeSpec, a *activation, finish func(*activation, error)) {
	fail := func(err error) { m.rollbackUnpublished(a, func() { finish(nil, err) }) }
	if err := m.admitWithContext(ctx, ms.parent); err != nil {
		fail(err)
		return
	}
	if err := m.ownedBy(ms.parent, a); err != nil {
		fail(err)
		return
	}
	a.boundary = a.handle.Session().Len()
	m.emitStart(a, func(err error) {
		if err != nil {
			fail(err)
			return
		}
		finish(a, nil)
	})
}

// ownedBy gives a freshly installed Activation to its parent; a woken
// child whose parent is not live here (nil) has no owner here.
func (m *Manager) ownedBy(p *parent.Handle, a *activation) error {
	if p == nil {
		return nil
	}
	return m.acquireOwnership(p, a)
}

// emitStart calls Options.Started on the lifecycle goroutine and posts
// its outcome back to the actor.
func (m *Manager) emitStart(a *activation, then func(error)) {
	info, e := a.run, a.edge
	m.edges.run(func() {
		err := m.started(info)
		e.startOK = err == nil
		m.post(func() { then(err) })
	})
}

// started calls Options.Started, turning its panic into a publication failure.
func (m *Manager) started(info RunInfo) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("subagent: subagent/start publication failed: %v", r)
		}
	}()
	return m.onStarted(info)
}

// submitAdmitted is the final admission span, with no wait in it: the
// caller's context, the DRAINING gate, the Activation's disposal, the
// exact-live-direct-parent check against the live child's header, parent
// ownership, then the message id recorded as accepted before the inbox
// accepts the message. It returns the MessageID.
func (m *Manager) submitAdmitted(ctx context.Context, a *activation, content []event.Block, source event.Source, p *parent.Handle) (string, error) {
	msg, err := m.accept(ctx, a, content, source, p)
	if err != nil {
		return "", err
	}
	return m.enqueue(a, msg)
}

// accept runs the admission checks of submitAdmitted and returns the
// message under a new id, recorded as accepted.
func (m *Manager) accept(ctx context.Context, a *activation, content []event.Block, source event.Source, p *parent.Handle) (event.UserMessage, error) {
	if err := m.recheck(ctx, a, p); err != nil {
		return event.UserMessage{}, err
	}
	if err := a.handle.Session().WriteFailure(); err != nil {
		return event.UserMessage{}, logFailed(a.childID, err)
	}
	if err := m.acquireOwnership(p, a); err != nil {
		return event.UserMessage{}, err
	}
	id := inbox.NewMessageID()
	a.accepted[id] = true
	return event.UserMessage{Content: content, Source: source, Role: "user", ID: id}, nil
}

// recheck is the part of the admission checks that a wait can change:
// the caller's context, the DRAINING gate, the disposal and the parent.
func (m *Manager) recheck(ctx context.Context, a *activation, p *parent.Handle) error {
	if err := m.admitWithContext(ctx, p); err != nil {
		return err
	}
	if a.disposal != nil {
		return activationClosing(a.childID)
	}
	return m.authorize(p, a.childID, a.handle.Header().ParentSession)
}

// enqueue hands an accepted message to the child's inbox.
func (m *Manager) enqueue(a *activation, msg event.UserMessage) (string, error) {
	if _, err := a.handle.Post(context.Background(), msg); err != nil {
		delete(a.accepted, msg.ID)
		return "", err
	}
	a.enqueued[msg.ID] = true
	return msg.ID, nil
}

// submitMaterialized submits to a freshly materialized Activation; on any
// failure it runs the full disposal (its own error swallowed) before
// reporting the original error. done runs in the actor.
func (m *Manager) submitMaterialized(ctx context.Context, a *activation, content []event.Block, source event.Source, p *parent.Handle, done func(string, error)) {
	m.submit(ctx, a, content, source, p, func(id string, err error) {
		if err == nil {
			done(id, nil)
			return
		}
		m.submitFailed(a, err, done)
	})
}

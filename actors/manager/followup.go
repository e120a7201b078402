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
	return m.call(ctx, followupRequest{&op{kind: opFollowup, ctx: ctx, childID: childID, parent: p, content: content, source: source}})
}

// A follow-up takes these steps in the core, each on one message; this
// file holds every one of them, in this order (a start and a wake share
// the admission, materialization and replay steps below):
//
//  1. followup (followupRequest): the DRAINING gate, then the child's
//     lock (op.go; lockAbandoned if the caller's context ends while it
//     is queued).
//  2. route, holding the lock: by what the core knows of the child
//     (decideRoute), one of
//     - resident, running or waiting: submit, the final admission (with
//     a durable inbox: commitAdmission, then admitted); a waiting child
//     wakes as a running one queues;
//     - elsewhere: admitElsewhere, to the durable inbox of the process
//     holding the child (admittedElsewhere);
//     - absent: a cold resume (coldResume, resumeLoaded, materialize:
//     opened, publish, startEmitted; replayPending: pendingRead; then
//     submit);
//     - after a disposal (one open, or one opened now for a fenced
//     epoch): the lock given up, the disposal awaited (disposalSettled,
//     op.go), then step 1 again (retry).
//
// Authority, the exact live direct parent, is decided by authorize
// alone: at the op's admission before its first wait (admission), when an
// epoch it materialized is published (ownedBy) and in its final
// admission step (admitFinal).

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

// The resident route: the final admission. A start's first prompt and a
// cold resume's follow-up end here too.

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

// commitGate refuses a durable commit the final step would refuse for a
// reason the actor knows already (admitFinal checks them all again).
func (m *core) commitGate(o *op) error {
	if err := m.admissionOpen(o); err != nil {
		return err
	}
	return m.logIntact(o.a)
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

// The elsewhere route: another process holds the child.

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

// A cold resume rebuilds an absent child from its log, for a follow-up
// (route), in these steps (each runs in the actor; the I/O
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
//     (materialize, below) starts with the descriptor's route from that same
//     log (read once; on a store other processes write, read again once
//     the lease is held). Another process that took the lease first
//     sends the follow-up elsewhere too (notMaterialized).
//  3. replayPending, once materialized: the messages the
//     child's durable inbox holds unclaimed are handed to the new epoch
//     first.
//  4. submit (above), once replayed: the follow-up's own
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

// elsewhere reports whether a cold resume's failure says another process
// holds the child's lease while the store wakes that process.
func (m *core) elsewhere(err error) bool {
	return m.wakes && errors.Is(err, fault.LeaseHeld)
}

// reusable is the log a cold resume read before it acquired the lease,
// or nil when other processes write the store (one that wakes): one may
// have appended between that read and the acquire, so the resume reads
// the log again once it holds the lease.
func (m *core) reusable(log *session.Log) *session.Log {
	if m.wakes {
		return nil
	}
	return log
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

// ownDescriptor is the payload of the first descriptor event among the
// log's own events (Header.OwnStart on).
func ownDescriptor(log *session.Log) (json.RawMessage, bool) {
	for _, e := range log.Events[min(log.Header.OwnStart(), len(log.Events)):] {
		if e.Type == vocab.TypeSubagentDescriptor {
			return e.Data, true
		}
	}
	return nil, false
}

// resumeSpec rebuilds the child from its descriptor alone: the route and
// composition it declared, nothing it did not (no max tokens; no runtime
// depth: the header's delegationDepth is the floor).
func resumeSpec(d descriptor.Data) parent.Spec {
	return parent.Spec{Provider: d.AgentProvider, Model: d.AgentModel, Persona: d.Persona, ToolFilter: d.ToolFilter}
}

// Materialization: building an epoch and publishing it, for a cold
// resume, a start (start.go) and a wake's takeover (wake.go).

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
	if id, building := m.parentBeingBuilt(o.ms.parent); building {
		m.st.parked[id] = append(m.st.parked[id], o)
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

// parentBeingBuilt reports whether p is live but not yet the handle of
// an installed Activation while an op on p's own id holds its lock: p's
// epoch is being built (a resume publishes the agent before the manager
// installs it). A child materialized now would not be spawned under p's
// actor, so p could settle and end before it: the child's
// materialization waits until that op lets go (unpark), with p's id.
func (m *core) parentBeingBuilt(p *parent.Handle) (string, bool) {
	if p == nil {
		return "", false
	}
	id := m.env.idOf(p)
	if a := m.st.activations[id]; a != nil && a.handle == p {
		return id, false
	}
	return id, m.locked(id) && m.env.isLive(p)
}

// unpark materializes again the ops parked for id's epoch to be built.
func (m *core) unpark(id string) {
	parked := m.st.parked[id]
	if len(parked) == 0 {
		return
	}
	delete(m.st.parked, id)
	for _, o := range parked {
		m.materialize(o)
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
	a.link = epochLink{m: m, a: a}
	link := &a.link
	h.Observe(link.event)
	h.Activation().OnFenced(link.fenced)
	h.Activation().OnStop(link.stopping)
	if !h.Releasing(link) {
		link.stopping()
		go m.releasedOnceDisposed(a)
	}
}

// releasedOnceDisposed sends released for a, whose stop took its release
// step before the manager could wrap it, once the handle's own release
// is over.
func (m *Manager) releasedOnceDisposed(a *activation) {
	<-a.handle.Disposed()
	if err := a.handle.Dispose(context.Background()); err != nil {
		a.link.out.failure = handleDisposalFailed(a.childID, err)
	}
	m.send(released{a})
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

// Replay: a rebuilt epoch is handed what its durable inbox holds.

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

package manager

import (
	"context"
	"errors"
	"fmt"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/fault"
)

// checkSettled opens the disposal of a settled Activation (idle, owning no
// child, no accepted id unclaimed) unless a disposal is open already or a
// critical section of the child holds its lock (the lock's release checks
// again). A failure of that disposal is logged (before its end edge), never
// returned.
//
// An Activation whose session lease was fenced is disposed as soon as it
// is checked, whatever it owns: it can write nothing more, and a later
// follow-up cold-resumes the child under a new lease.
func (m *core) checkSettled(a *activation) {
	if a.disposal != nil || m.locked(a.childID) || (m.residency(a) != settled && !m.fenced(a)) {
		return
	}
	m.dispose(a)
	a.settling = true
}

// fenced reports whether a's session log was fenced: another holder
// took its lease over.
func (m *core) fenced(a *activation) bool {
	return errors.Is(m.env.writeFailure(a.handle), fault.Fenced)
}

// messageLeft clears an accepted id once its message was dequeued into a
// turn or discarded, and lets the Activation settle.
func (m *core) messageLeft(a *activation, messageID string) {
	if a.gone || !a.accepted[messageID] {
		return
	}
	delete(a.accepted, messageID)
	m.checkSettled(a)
}

// messageDiscarded is messageLeft for a message removed unrun; an
// accepted one counts towards the epoch end's discardedFollowups, whether
// the teardown discarded it or the log's failure hook did before any
// teardown opened.
func (m *core) messageDiscarded(a *activation, messageID string) {
	if !a.gone && a.accepted[messageID] {
		a.discarded++
	}
	m.messageLeft(a, messageID)
}

// statusIdle lets a child that went idle settle.
func (m *core) statusIdle(a *activation) {
	if !a.gone {
		m.checkSettled(a)
	}
}

// dispose opens a's disposal (memoized; the open disposal is the
// admission cut-off) and, in this one step, the disposal of every owned
// child; then it stops a's actor, cancelling its turn and queued messages
// (cause parent). Every owned child's actor was spawned under its
// owner's (see acquireOwnership), so that stop reaches the whole subtree
// top-down before anything waits, and releases it child-first: an agent
// runs its release step (releaseStep) once its cancelled turn ended and
// its children's actors stopped, then stops its own. A child's released
// therefore reaches the actor before its owner's.
func (m *core) dispose(a *activation) *disposal {
	if a.disposal != nil {
		return a.disposal
	}
	d := m.openDisposal(a)
	for child := range a.owned { // in any order: their owner's stop stops them all
		if !child.gone {
			m.dispose(child)
		}
	}
	if a.owner == nil || a.owner.disposal == nil { // else its owner's stop stops it
		m.stopActor(a, agent.CauseParent)
	}
	return d
}

// stopping notes that a's actor began stopping. An actor that stops
// without the manager disposing it (the stop-and-report supervisor
// stopped it, or its own parent's actor did) fails its epoch and is
// disposed from here, its owned children with it; it is never restarted.
// This arrives before anything its stop cancels can settle it.
func (m *core) stopping(a *activation) {
	if a.disposal != nil || a.gone {
		return
	}
	a.failure = fmt.Errorf("subagent %q agent actor stopped unexpectedly", a.childID)
	m.logger.Warn(a.failure.Error())
	m.dispose(a)
}

// released is a's release step's outcome: the end of a rollback
// (rolledBack), or of a disposal. The first failure wins: the actor's
// own, then its children's, then the release step's.
func (m *core) released(a *activation, out teardownOutcome) {
	if m.ownsUnreleased(a) { // an owned child's release is still on its way
		held := out // out itself stays on the stack
		a.heldRelease = &held
		return
	}
	if a.rollback != nil {
		m.rolledBack(a, out.failure)
		return
	}
	switch {
	case a.failure != nil:
		out.failure = teardownStepFailed(a.childID, a.failure)
	case len(a.childFailures) > 0:
		out.failure = childTeardownFailed(a.childID, a.childFailures)
	}
	m.release(a, out)
}

// childReleased notes that child, owned by owner, was released with
// failure (nil when it settled cleanly): an owner being disposed reports
// its children's failures.
func (m *core) childReleased(owner *activation, failure error) {
	if owner.disposal != nil && failure != nil {
		owner.childFailures = append(owner.childFailures, failure)
	}
}

// openDisposal sets a's admission cut-off.
func (m *core) openDisposal(a *activation) *disposal {
	a.ending = disposal{done: make(chan struct{})}
	a.disposal = &a.ending
	a.disposing.Store(true)
	return a.disposal
}

// releaseStep is the first part of the release step of a's actor's stop
// (parent.Handle.Releasing): it runs off the actor, once a is idle and every
// agent spawned under it was released, and the actor stops once the
// step ended. In order: the durability checkpoint and the epoch captured
// while the child is still registered (here), the handle's own release
// (session released, unregistered, agent/disposed); then the outcome
// goes to the actor (epochLink.Released, released). A rollback skips the
// checkpoint and the capture.
func (m *Manager) releaseStep(a *activation) teardownOutcome {
	var out teardownOutcome
	if !a.rollingBack.Load() {
		out.failure = m.durability(context.Background(), a)
		out.epoch = recordedEpoch(a.handle.Activation(), a.handle.Session().Events(), a.boundary)
	}
	return out
}

// durability is the required final checkpoint: only true confirms.
func (m *Manager) durability(ctx context.Context, a *activation) error {
	ok, err := m.checkpoint(ctx, a.handle.Session())
	switch {
	case err != nil:
		return durabilityCheckpointFailed(a.childID, err)
	case !ok:
		return durabilityUnconfirmed(a.childID)
	}
	return nil
}

// release removes a settled-or-failed Activation, releases its ownership
// (even on failure, so ancestors never stay pinned in waiting), then emits
// subagent/end and settles the disposal on the lifecycle goroutine.
func (m *core) release(a *activation, out teardownOutcome) {
	d, failure, epoch, owned := a.disposal, out.failure, out.epoch, a.owner != nil
	m.forget(a)
	due := m.releaseOwnership(a, failure)
	d.err = failure
	if failure != nil && a.settling {
		m.logger.Warn(fmt.Sprintf("subagent %q activation teardown failed: %s", a.childID, chain(failure)))
	}
	rec := &endRecord{RunEndInfo: RunEndInfo{RunInfo: a.run, StopReason: epoch.StopReason,
		LastAssistantMessage: epoch.Output, DiscardedFollowups: a.discarded}}
	if failure != nil {
		rec.StopReason, rec.LastAssistantMessage = agent.Error, nil
	}
	m.remember(rec, owned)
	m.emit(emitEnd{a, &rec.RunEndInfo})
	m.releaseHeld(due)
}

// rollbackUnpublished undoes o's epoch, which failed with err before it
// was published (or before its start edge): its actor is stopped, and its
// release step, with no checkpoint, ends in rolledBack, which removes the
// Activation with its ownership released; no end edge. When a disposal
// is open already, the rollback waits for it instead (disposalSettled).
func (m *core) rollbackUnpublished(o *op, err error) {
	a := o.a
	o.failed = err
	if d := a.disposal; d != nil {
		m.awaitDisposal(o, d, false)
		return
	}
	m.openDisposal(a)
	a.rollback = o
	a.rollingBack.Store(true)
	m.stopActor(a, agent.CauseDisposed)
}

// rolledBack removes the rolled-back Activation and reports the failure
// that rolled it back.
func (m *core) rolledBack(a *activation, failure error) {
	o := a.rollback
	if failure != nil {
		m.logger.Warn(fmt.Sprintf("subagent %q rollback failed: %s", a.childID, chain(failure)))
	}
	m.forget(a)
	due := m.releaseOwnership(a, nil)
	m.emit(settleRollback{a})
	m.releaseHeld(due)
	failed := o.failed
	o.failed = nil
	m.notMaterialized(o, failed)
}

// emitEndOff queues a's end edge.
func (m *Manager) emitEndOff(a *activation, end *RunEndInfo) {
	m.pushEdge(endEdge{end, a.edge, a.disposal, a.waiters})
}

// forget drops a from the manager's tables, and the remembered ends of
// its children unless an agent with its id is live (remember).
func (m *core) forget(a *activation) {
	if m.st.activations[a.childID] == a {
		delete(m.st.activations, a.childID)
	}
	m.emit(forgetEpoch{a})
	a.gone = true
	m.parentDisposed(a.childID)
}

// waitAll waits for every disposal and returns their failures in order.
func waitAll(ds []*disposal) []error {
	var errs []error
	for _, d := range ds {
		<-d.done
		if d.err != nil {
			errs = append(errs, d.err)
		}
	}
	return errs
}

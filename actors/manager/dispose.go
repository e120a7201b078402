package manager

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

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

// onTerminated notes that an Activation's actor stopped. The manager keeps
// watching the actor through its disposal, so the Terminated of every
// disposed actor arrives before the Activation is released (see
// arrive) and never after the manager has halted. An actor that stopped
// without the manager disposing it fails its epoch, which is torn down,
// never restarted.
func (m *core) onTerminated(a *activation) {
	if a.terminated {
		return
	}
	a.terminated = true
	if a.disposal == nil {
		a.failure = fmt.Errorf("subagent %q agent actor stopped unexpectedly", a.childID)
		m.logger.Warn(a.failure.Error())
		m.dispose(a)
	}
	if a.arrive() {
		m.release(a, a.outcome)
	}
}

// dispose opens a's disposal transaction (memoized; the open disposal is
// the admission cut-off). In this one synchronous span it cancels a's turn
// and queued messages, then opens the disposal of every owned child, so
// cancellation reaches the whole subtree top-down before anything waits.
// The waiting part (finishTeardown) starts child-first: at once for an
// Activation that owns no child (once its cancelled turn has ended), and
// for an owner when the release of its last child reaches the actor
// (childReleased).
func (m *core) dispose(a *activation) *disposal {
	if a.disposal != nil {
		return a.disposal
	}
	d := m.openDisposal(a)
	m.emit(cancelTurn{a})
	children := m.ownedActivations(a)
	for _, child := range children {
		m.dispose(child)
	}
	if len(children) == 0 {
		m.startTeardown(a)
	}
	return d
}

// startTeardown runs a's finishTeardown once a is idle (on the goroutine
// of its cancelled turn once that turn has ended, or a new one), with the
// failures of its released children.
func (m *core) startTeardown(a *activation) {
	if a.tearingDown {
		return
	}
	a.tearingDown = true
	m.emit(tearDown{a, a.childFailures})
}

// childReleased notes in the actor that child, owned by owner, was
// released with failure (nil when it settled cleanly); the owner's
// teardown starts once its disposal is open and it owns no child any more.
func (m *core) childReleased(owner *activation, failure error) {
	if owner.disposal == nil {
		return
	}
	if failure != nil {
		owner.childFailures = append(owner.childFailures, failure)
	}
	if !m.ownsLiveChild(owner) {
		m.startTeardown(owner)
	}
}

// ownsLiveChild reports whether a owns a child not yet released.
func (m *core) ownsLiveChild(a *activation) bool {
	for child := range a.owned {
		if !child.gone {
			return true
		}
	}
	return false
}

// openDisposal sets a's admission cut-off.
func (m *core) openDisposal(a *activation) *disposal {
	a.disposal = &disposal{done: make(chan struct{})}
	a.disposing.Store(true)
	return a.disposal
}

// ownedActivations are a's live owned children in creation order.
func (m *core) ownedActivations(a *activation) []*activation {
	owned := make([]*activation, 0, len(a.owned))
	for child := range a.owned {
		if !child.gone {
			owned = append(owned, child)
		}
	}
	slices.SortFunc(owned, func(x, y *activation) int { return cmp.Compare(x.order, y.order) })
	return owned
}

// finishTeardown is the waiting part of a disposal, off the actor, after
// every owned child was released (child-first), in this order:
// quiescence, the durability checkpoint, the epoch captured while the
// child is still registered, the handle disposed; the first failure wins
// (the actor's own, then its children's). The Activation and its
// ownership are then released on the actor: by the teardownDone sent from
// here when the actor's Terminated has already arrived (or none will
// come), else by that Terminated (see activation.arrive).
func (m *Manager) finishTeardown(a *activation, childFailures []error) {
	failure := a.failure
	if failure != nil {
		failure = teardownStepFailed(a.childID, failure)
	}
	if len(childFailures) > 0 && failure == nil {
		failure = childTeardownFailed(a.childID, childFailures)
	}
	ctx := context.Background()
	if err := a.handle.Activation().WhenIdle(ctx); err != nil && failure == nil {
		failure = teardownStepFailed(a.childID, err)
	}
	if err := m.durability(ctx, a); err != nil && failure == nil {
		failure = err
	}
	epoch := recordedEpoch(a.handle.Activation(), a.handle.Session().Events(), a.boundary)
	if err := a.handle.Dispose(ctx); err != nil && failure == nil {
		failure = handleDisposalFailed(a.childID, err)
	}
	out := teardownOutcome{failure: failure, epoch: epoch}
	if isClosed(a.handle.Activation().Done()) { // its Terminated is due too
		a.outcome = out
		if !a.arrive() {
			return // onTerminated releases it
		}
	}
	m.send(teardownDone{a: a, out: out})
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
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
	d, failure, epoch := a.disposal, out.failure, out.epoch
	m.forget(a)
	m.releaseOwnership(a, failure)
	d.err = failure
	if failure != nil && a.settling {
		m.logger.Warn(fmt.Sprintf("subagent %q activation teardown failed: %s", a.childID, chain(failure)))
	}
	end := RunEndInfo{RunInfo: a.run, StopReason: epoch.StopReason, LastAssistantMessage: epoch.Output,
		DiscardedFollowups: a.discarded}
	if failure != nil {
		end.StopReason, end.LastAssistantMessage = agent.Error, nil
	}
	m.remember(end)
	m.emit(emitEnd{a, end})
}

// emitEndOff queues a's end edge.
func (m *Manager) emitEndOff(a *activation, end RunEndInfo) {
	m.pushEdge(endEdge{end, a.edge, a.disposal, a.waiters})
}

// forget drops a from the manager's tables.
func (m *core) forget(a *activation) {
	if m.st.activations[a.childID] == a {
		delete(m.st.activations, a.childID)
	}
	m.emit(forgetEpoch{a})
	a.gone = true
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

package manager

import (
	"cmp"
	"context"
	"slices"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/actorkit"
)

// op is one entry call in flight in the actor: a start, a follow-up or a
// wake. It moves through the steps of its kind (start.go, followup.go,
// wake.go) and the steps they share (the admission, materialization and
// replay steps of followup.go). A step either decides at once or starts I/O off the
// actor; the I/O's result comes back as a message carrying the op, and
// its handler takes the next step. The actor owns an op once it was
// sent; nothing else touches it until its reply.
type op struct {
	kind    opKind
	ctx     context.Context
	childID string
	// parent is the sender of a start or a follow-up; a wake has none.
	parent  *parent.Handle
	content []event.Block
	source  event.Source
	spec    StartSpec        // a start's request
	ms      materializeSpec  // the epoch a start or a resume builds
	mat     *materialization // set between admission and publication
	a       *activation      // the epoch the message goes to, once known
	// fresh: a was materialized by this op, so a failed admission
	// disposes it before the op replies.
	fresh bool
	msg   event.UserMessage // the message being committed durably
	// failed is the error the op reports once the disposal it waits for
	// settled (a fresh epoch disposed, a rollback behind an open disposal).
	failed    error
	locked    bool        // it holds its child's lock
	queued    bool        // it waited for its child's lock: its ctx is watched
	stopWatch func() bool // stops that watch (the shell's)
	reply     chan<- outcome
	replied   bool
}

// opKind is what an op was asked to do.
type opKind int

const (
	opStart    opKind = iota // StartContinuable
	opFollowup               // Followup
	opWake                   // a wake from the store (wake.go)
)

// outcome is an op's verdict: the accepted message's id, or why not.
type outcome struct {
	messageID string
	err       error
}

// entry is how Receive finds the op a message carries.
func (o *op) entry() *op { return o }

// carrier is a message that carries an op.
type carrier interface{ entry() *op }

// call sends req to the actor and waits for its op's verdict. The actor
// always replies, so the caller waits for it even when ctx ends: ctx
// cancellation reaches the op at its next checkpoint.
func (m *Manager) call(ctx context.Context, req carrier) (string, error) {
	if err := m.refusal(ctx); err != nil {
		return "", err
	}
	if !m.ops.enter() {
		return "", draining()
	}
	defer m.ops.leave()
	reply := make(chan outcome, 1)
	req.entry().reply = reply
	m.send(req)
	out := <-reply
	return out.messageID, actorkit.Cancellation(ctx, out.err)
}

// refusal is the answer to a call before it reaches the actor: the
// closed error once the runtime's shutdown began, CANCELLED when the
// caller's ctx is done already.
func (m *Manager) refusal(ctx context.Context) error {
	if err := m.rt.Err(); err != nil {
		return err
	}
	return actorkit.Cancellation(ctx, ctx.Err())
}

// finish gives up o's lock (the next waiter runs) and replies once.
func (m *core) finish(o *op, messageID string, err error) {
	m.unlock(o)
	if !o.replied {
		o.replied = true
		m.emit(reply{o, outcome{messageID, err}})
	}
}

// childLock serializes the critical sections of one child id: the head
// op holds it.
type childLock struct {
	waiters []*op
}

// lock queues o behind the ops holding or awaiting its child's lock; o
// takes its locked step (holding) once it is at the head. If o's ctx
// ends while it is still queued, it is dropped with ctx's error.
func (m *core) lock(o *op) {
	lock := m.st.locks[o.childID]
	if lock == nil {
		lock = &childLock{}
		m.st.locks[o.childID] = lock
	}
	lock.waiters = append(lock.waiters, o)
	if len(lock.waiters) == 1 {
		m.grant(lock)
		return
	}
	o.queued = true
	m.emit(watchQueued{o})
}

// grant runs the head waiter's locked step.
func (m *core) grant(lock *childLock) {
	o := lock.waiters[0]
	if o.queued {
		o.queued = false
		m.emit(unwatchQueued{o})
	}
	o.locked = true
	m.holding(o)
}

// holding is o's first step under its child's lock.
func (m *core) holding(o *op) {
	switch o.kind {
	case opStart:
		m.startLocked(o)
	case opFollowup:
		m.route(o)
	case opWake:
		m.wakeRoute(o)
	}
}

// unlock hands o's lock, if it holds it, to the next waiter, or drops
// it and lets the child's Activation settle if it was waiting for it.
func (m *core) unlock(o *op) {
	if !o.locked {
		return
	}
	o.locked = false
	defer m.unpark(o.childID)
	lock := m.st.locks[o.childID]
	lock.waiters = lock.waiters[1:]
	if len(lock.waiters) > 0 {
		m.grant(lock)
		return
	}
	delete(m.st.locks, o.childID)
	if a := m.st.activations[o.childID]; a != nil {
		m.checkSettled(a)
	}
}

// lockAbandoned drops a queued op whose context ended before its turn.
func (m *core) lockAbandoned(o *op) {
	lock := m.st.locks[o.childID]
	if lock == nil {
		return
	}
	if idx := slices.Index(lock.waiters, o); idx > 0 {
		lock.waiters = slices.Delete(lock.waiters, idx, idx+1)
		m.finish(o, "", o.ctx.Err())
	}
}

func (m *core) locked(id string) bool { return m.st.locks[id] != nil }

// awaitDisposal has disposalSettled sent for o once d settled, or, when
// cancellable, once o's context ended.
func (m *core) awaitDisposal(o *op, d *disposal, cancellable bool) {
	m.emit(awaitDisposal{o, d, cancellable})
}

// waitDisposal is awaitDisposal's wait (off the actor).
func (m *Manager) waitDisposal(o *op, d *disposal, cancellable bool) {
	var cancel <-chan struct{}
	if cancellable {
		cancel = o.ctx.Done()
	}
	select {
	case <-d.done:
	case <-cancel:
	}
	m.send(disposalSettled{o})
}

// afterDisposal is what an op does once the disposal it waited for
// settled.
type afterDisposal int

const (
	rollbackDone afterDisposal = iota // a rollback behind an open disposal: the materialization failed
	reportFailed                      // a fresh epoch disposed after its failed admission: report that
	retryOp                           // the child is absent now: run the op again from its first step
)

// decideAfterDisposal decides from whether the op is still materializing
// and whether it carries a failure to report.
func decideAfterDisposal(materializing bool, failed error) afterDisposal {
	switch {
	case materializing:
		return rollbackDone
	case failed != nil:
		return reportFailed
	}
	return retryOp
}

// disposalSettled takes o's step after the disposal it waited for.
func (m *core) disposalSettled(o *op) {
	failed := o.failed
	o.failed = nil
	switch decideAfterDisposal(o.mat != nil, failed) {
	case rollbackDone:
		m.notMaterialized(o, failed)
	case reportFailed:
		m.finish(o, "", failed)
	case retryOp:
		m.retry(o)
	}
}

// retry runs o again from its first step once the disposal it met
// settled (a follow-up checks the DRAINING gate and its context first).
func (m *core) retry(o *op) {
	o.a = nil
	switch o.kind {
	case opFollowup:
		if err := cmp.Or(m.admit(o.parent), o.ctx.Err()); err != nil {
			m.finish(o, "", err)
			return
		}
		m.followup(o)
	case opWake:
		m.wake(o)
	}
}

// retryAfter gives up o's lock, then retries o once d settled or o's
// context ended.
func (m *core) retryAfter(o *op, d *disposal) {
	m.unlock(o)
	m.awaitDisposal(o, d, true)
}

// disposeFresh disposes the epoch o materialized, whose admission failed
// with err, and reports err once the disposal settled.
func (m *core) disposeFresh(o *op, err error) {
	d := m.dispose(o.a)
	o.failed = err
	m.awaitDisposal(o, d, false)
}

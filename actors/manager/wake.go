package manager

import (
	"context"
	"errors"
	"sync"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/session"
)

// Wakes across processes. With a store whose durable inbox wakes
// (session.Waker: Postgres), a follow-up accepted by any process reaches
// the child wherever it runs:
//
//   - The process where the exact live parent is (the only one whose
//     admissions the store accepts) resumes an absent child itself, as
//     without wakes. When another process holds the child's lease, it
//     commits the message to the child's durable inbox instead (the store
//     checks the parent's live epoch and the drain cut-off in that
//     statement: authority stays in SQL) and answers with its MessageID;
//     the commit wakes every process. It remembers that child as held
//     elsewhere, so the next follow-ups go to the inbox without a resume
//     attempt, until it resumes the child itself.
//   - A process that hears a wake for a child resident here hands the
//     activation the pending messages it has not seen, oldest first. For
//     a child resident nowhere it tries the takeover (the lease decides
//     the winner; a loser does nothing), cold-resumes it and runs them.
//     If its exact live parent is live here, the resumed child is that
//     parent's, as a follow-up would resume it; otherwise the child runs
//     as the root of a forest of its own here: it owns what it starts,
//     settles and is disposed child-first as any Activation, and the
//     manager-wide drain covers it; scoped drains of this process reach it
//     only through a live parent here. Its parent's process learns nothing
//     of it: parent-side decisions about it are the store's.
//
// The holder that releases a session with messages pending, and the
// store's sweep, wake it again, so a lost wake costs at most a sweep.

// wakes is the manager's wake listener.
type wakes struct {
	stop      context.CancelFunc // nil when the store does not wake
	done      sync.WaitGroup     // the listener and the wake runners
	listening chan struct{}      // closed once it first listens (nil: it never will)
	queue     wakeQueue
	idleOnce  sync.Once
	idle      chan struct{} // closed once done is; made by stopWakes
}

// defaultWakeLimit is how many wakes run at once when Options leave it
// unset: enough to overlap the store reads of a few takeovers, few enough
// that a burst of wakes (a sweep, a drain's cut-off) cannot start a
// goroutine and a store read per woken session at once.
const defaultWakeLimit = 8

// wakeQueue runs wakes on at most limit goroutines of group at once,
// each handled by runner under ctx. A wake for a session already queued
// (not yet running) coalesces with it; one for a session whose wake is
// running queues again, since that run may have read the session's inbox
// before the message that woke it was committed. Once ctx is done, what
// is still queued is dropped (the store's sweep wakes a session again).
type wakeQueue struct {
	limit   int
	ctx     context.Context
	group   *sync.WaitGroup
	runner  wakeRunner
	mu      sync.Mutex
	running int
	order   []string        // queued ids, oldest first
	queued  map[string]bool // the ids in order
}

// wakeRunner handles one wake (the Manager's runWake).
type wakeRunner interface {
	runWake(ctx context.Context, id string)
}

// push queues id and starts a runner in group when fewer than limit run.
// The caller must be a member of group (the listener), so group is never
// idle while it adds to it. It does not block.
func (q *wakeQueue) push(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.queued[id] {
		return
	}
	if q.queued == nil {
		q.queued = map[string]bool{}
	}
	q.queued[id] = true
	q.order = append(q.order, id)
	if q.running < max(q.limit, 1) {
		q.running++
		q.group.Go(q.runQueued)
	}
}

// runQueued runs the queued wakes, oldest first, until none is left or
// ctx is done.
func (q *wakeQueue) runQueued() {
	for {
		q.mu.Lock()
		if q.ctx.Err() != nil {
			q.order = nil
			clear(q.queued)
		}
		if len(q.order) == 0 {
			q.running--
			q.mu.Unlock()
			return
		}
		id := q.order[0]
		q.order = q.order[1:]
		delete(q.queued, id)
		q.mu.Unlock()
		q.runner.runWake(q.ctx, id)
	}
}

// startWakes listens for the store's wakes (when its inbox wakes) until
// stopWakes; each wake is handled as a call of its own, at most
// limit of them at once (wakeQueue).
func (m *Manager) startWakes(limit int) {
	w, ok := m.inbox.(session.Waker)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.wakes.stop = cancel
	m.wakes.listening = make(chan struct{})
	m.wakes.queue = wakeQueue{limit: limit, ctx: ctx, group: &m.wakes.done, runner: m}
	m.wakes.done.Go((&wakeListener{m: m, ctx: ctx, waker: w}).listen)
}

// wakeListener is the listening goroutine: the store's waker, and the
// context that stops it and the wakes it queued.
type wakeListener struct {
	m         *Manager
	ctx       context.Context
	waker     session.Waker
	listening sync.Once
}

// listen listens until ctx ends.
func (l *wakeListener) listen() { _ = l.waker.Listen(l.ctx, l.listened, l.woken) }

// listened marks the first time the store listens.
func (l *wakeListener) listened() { l.listening.Do(l.m.wakes.markListening) }

// woken queues the wake of id.
func (l *wakeListener) woken(id string) {
	l.m.wakes.queue.push(id)
}

// markListening closes listening, once.
func (w *wakes) markListening() { close(w.listening) }

// watchIdle makes idle and closes it once the listener and the wake
// runners are done.
func (w *wakes) watchIdle() {
	w.idle = make(chan struct{})
	go w.closeWhenIdle()
}

func (w *wakes) closeWhenIdle() {
	w.done.Wait()
	close(w.idle)
}

// stopWakes stops listening (the wakes still queued are dropped) and
// waits for the wakes in flight to be handled, or for ctx to be done
// (then it returns ctx's error; the wakes end on their own, and a later
// call waits for them again). It is idempotent.
func (m *Manager) stopWakes(ctx context.Context) error {
	if m.wakes.stop == nil {
		return nil
	}
	m.wakes.stop()
	m.wakes.idleOnce.Do(m.wakes.watchIdle)
	select {
	case <-m.wakes.idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// runWake handles one wake as a call of its own and logs its failure.
func (m *Manager) runWake(ctx context.Context, id string) {
	_, err := m.call(ctx, wakeRequest{&op{kind: opWake, ctx: ctx, childID: id}})
	m.wakeFailed(id, err)
}

// wakeFailed logs a wake that could not run the child's messages for a
// reason other than another holder, a drain or the manager closing.
func (m *Manager) wakeFailed(id string, err error) {
	switch {
	case err == nil, errors.Is(err, fault.LeaseHeld), errors.Is(err, context.Canceled),
		fault.CodeOf(err) == fault.Draining, m.rt.Err() != nil:
		return
	}
	m.logger.Warn("subagent: a woken child did not run its pending follow-ups", "child", id, "err", err)
}

// A wake takes these steps in the actor (see the comment at the top of
// this file):
//
//  1. wake: the manager-wide DRAINING gate, then the child's lock, so
//     the wake queues behind the admissions this process has in flight
//     for the child.
//  2. wakeRoute, holding the lock (decideRoute): a child resident here
//     reads whether a drain in force closes it (drainRead); one absent
//     here (or last found elsewhere) is looked up for a takeover
//     (orphanRead); one being disposed is retried once that disposal
//     settled.
//  3. drainRead: a drained resident child is disposed and the wake
//     retried; otherwise it gets its pending messages (replayPending).
//  4. orphanRead: a child with pending messages and no live holder is
//     materialized from its descriptor (followup.go) and gets its
//     pending messages; a failed replay disposes the fresh epoch.

// wake is step 1.
func (m *core) wake(o *op) {
	if err := m.admit(nil); err != nil {
		m.finish(o, "", err)
		return
	}
	m.lock(o)
}

// wakeRoute is step 2.
func (m *core) wakeRoute(o *op) {
	a := m.st.activations[o.childID]
	switch m.routeOf(o, a) {
	case routeAbsent, routeElsewhere: // a wake looks for itself who holds it
		m.wakeAbsent(o)
	case routeAfterDisposal:
		m.retryAfter(o, a.disposal)
	case routeDisposeFenced:
		m.retryAfter(o, m.disposeFenced(a))
	case routeResident:
		o.a = a
		m.emit(readDrained{o})
	}
}

// readDrainedOff reads whether a drain in force closes admission to the
// child (off the actor): the drain's process recorded its cut-off, which
// wakes every session below it that a process holds.
func (m *Manager) readDrainedOff(o *op) {
	drained, err := m.inbox.(session.Waker).Drained(o.ctx, o.childID)
	m.send(drainRead{o, drained, err})
}

// wokenResident is what a wake does with a child resident here.
type wokenResident int

const (
	wokenReplay  wokenResident = iota // hand it its pending messages
	wokenDispose                      // a drain closed it: dispose it, then wake again
	wokenDone                         // a drain closed it and it is gone or going already
)

// decideWokenResident decides from whether a drain in force closes the
// child and whether a is still its current epoch, with no disposal open.
func decideWokenResident(drained, current bool) wokenResident {
	switch {
	case !drained:
		return wokenReplay
	case current:
		return wokenDispose
	}
	return wokenDone
}

// drainRead is step 3.
func (m *core) drainRead(msg drainRead) {
	o, a := msg.op, msg.op.a
	if msg.err != nil {
		m.finish(o, "", msg.err)
		return
	}
	current := a.disposal == nil && m.st.activations[a.childID] == a
	switch decideWokenResident(msg.drained, current) {
	case wokenReplay:
		m.replayPending(o)
	case wokenDispose:
		m.retryAfter(o, m.dispose(a))
	case wokenDone:
		m.finish(o, "", nil)
	}
}

// wakeAbsent looks up a child resident nowhere here for a takeover: one
// with pending messages and no live holder elsewhere (one cheap read; a
// holder that releases later wakes it again), and its log read (not
// repaired) for the descriptor, off the actor. A session live here
// outside the manager is left alone.
func (m *core) wakeAbsent(o *op) {
	if !m.env.hasStore() || m.env.sessionLive(o.childID) {
		m.finish(o, "", nil)
		return
	}
	m.emit(readOrphan{o})
}

// readOrphanOff is wakeAbsent's read (off the actor).
func (m *Manager) readOrphanOff(o *op) {
	orphaned, err := m.inbox.(session.Waker).Orphaned(o.ctx, o.childID)
	if err != nil || !orphaned {
		m.send(orphanRead{op: o, err: err})
		return
	}
	log, err := m.sessions.Store().Inspect(o.ctx, o.childID)
	m.send(orphanRead{o, true, log, err})
}

// orphanRead is step 4: the takeover, whose resume acquires the lease
// before its repairing load (a holder that came first: fault.LeaseHeld,
// and nothing is done). The resumed child is its exact live parent's
// here, as a follow-up would resume it; with no such parent it is the
// root of a forest of its own.
func (m *core) orphanRead(msg orphanRead) {
	o := msg.op
	if msg.err != nil || !msg.orphaned {
		m.finish(o, "", msg.err)
		return
	}
	d, err := continuationState(o.childID, msg.log)
	if err != nil {
		m.finish(o, "", err)
		return
	}
	owner := m.env.liveAgent(msg.log.Header.ParentSession) // nil: the parent is not live here
	o.ms = materializeSpec{childID: o.childID, provider: d.Provider, parent: owner, resume: resumeSpec(d)}
	m.materialize(o)
}

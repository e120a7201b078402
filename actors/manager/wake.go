package manager

import (
	"context"
	"errors"
	"sync"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
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

// wakeQueue runs wakes on at most limit goroutines at once. A wake for a
// session already queued (not yet running) coalesces with it; one for a
// session whose wake is running queues again, since that run may have
// read the session's inbox before the message that woke it was
// committed. Once its ctx is done, what is still queued is dropped (the
// store's sweep wakes a session again).
type wakeQueue struct {
	limit   int
	mu      sync.Mutex
	running int
	order   []string        // queued ids, oldest first
	queued  map[string]bool // the ids in order
}

// push queues id and starts a runner in group when fewer than limit run.
// The caller must be a member of group (the listener), so group is never
// idle while it adds to it. It does not block.
func (q *wakeQueue) push(ctx context.Context, group *sync.WaitGroup, id string, run func(id string)) {
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
		group.Go(func() { q.runQueued(ctx, run) })
	}
}

// runQueued runs the queued wakes, oldest first, until none is left or
// ctx is done.
func (q *wakeQueue) runQueued(ctx context.Context, run func(id string)) {
	for {
		q.mu.Lock()
		if ctx.Err() != nil {
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
		run(id)
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
	m.wakes.queue.limit = limit
	run := func(id string) {
		_, err := call(m, ctx, func(ctx context.Context, reply func(struct{}, error)) { m.wake(ctx, id, reply) })
		m.wakeFailed(id, err)
	}
	var listening sync.Once
	m.wakes.done.Go(func() {
		_ = w.Listen(ctx, func() { listening.Do(func() { close(m.wakes.listening) }) }, func(id string) {
			m.wakes.queue.push(ctx, &m.wakes.done, id, run)
		})
	})
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
	m.wakes.idleOnce.Do(func() {
		m.wakes.idle = make(chan struct{})
		go func() { m.wakes.done.Wait(); close(m.wakes.idle) }()
	})
	select {
	case <-m.wakes.idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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

// wake runs id's pending messages (see the comment at the top of this
// file) under the child's lock, so they queue behind the admissions this
// process has in flight for it.
func (m *Manager) wake(ctx context.Context, id string, done func(struct{}, error)) {
	finish := func(err error) { done(struct{}{}, err) }
	if err := m.admit(nil); err != nil {
		finish(err)
		return
	}
	m.withChildLock(ctx, id, func(release func()) {
		a := m.st.activations[id]
		switch m.routeOf(a, id) {
		case routeAbsent, routeElsewhere: // a wake looks for itself who holds it
			m.wakeAbsent(ctx, id, func(err error) { release(); finish(err) })
		case routeAfterDisposal:
			release()
			m.wakeAfterDisposal(ctx, id, a.disposal, done)
		case routeDisposeFenced:
			d := m.disposeFenced(a)
			release()
			m.wakeAfterDisposal(ctx, id, d, done)
		case routeResident:
			m.wakeResident(ctx, a, release, finish)
		}
	}, finish)
}

// wakeResident handles a wake for a, resident here, under its child lock
// (release gives it up): when a drain in force closes admission to a
// (the drain's process recorded its cut-off, which wakes every session
// below it that a process holds), a is disposed, child-first, and done
// waits for that disposal; otherwise a gets its pending messages.
func (m *Manager) wakeResident(ctx context.Context, a *activation, release func(), done func(error)) {
	waker := m.inbox.(session.Waker)
	async(m, func() drainRead {
		drained, err := waker.Drained(ctx, a.childID)
		return drainRead{drained, err}
	}, func(r drainRead) {
		switch {
		case r.err != nil:
			release()
			done(r.err)
		case r.drained && a.disposal == nil && m.st.activations[a.childID] == a:
			d := m.dispose(a)
			release()
			m.wakeAfterDisposal(ctx, a.childID, d, func(_ struct{}, err error) { done(err) })
		case r.drained:
			release()
			done(nil)
		default:
			m.replayPending(ctx, a, func(err error) { release(); done(err) })
		}
	})
}

// drainRead is what wakeResident reads before it decides.
type drainRead struct {
	drained bool
	err     error
}

// wakeAfterDisposal waits for an open disposal, then handles the wake
// again (the child is absent by then).
func (m *Manager) wakeAfterDisposal(ctx context.Context, id string, d *disposal, done func(struct{}, error)) {
	async(m, func() struct{} {
		select {
		case <-d.done:
		case <-ctx.Done():
		}
		return struct{}{}
	}, func(struct{}) { m.wake(ctx, id, done) })
}

// woken is what wakeAbsent reads before it takes a child over.
type woken struct {
	orphaned bool
	log      *session.Log
	err      error
}

// wakeAbsent takes over a child resident nowhere here that has pending
// messages and no live holder elsewhere (one cheap read; a holder that
// releases later wakes it again): its log read (not repaired) for the
// descriptor, then the resume, which acquires the lease before its
// repairing load (a holder that came first: fault.LeaseHeld, and nothing
// is done), then the pending messages replayed. A session live here
// outside the manager is left alone.
func (m *Manager) wakeAbsent(ctx context.Context, id string, done func(error)) {
	store := m.sessions.Store()
	if store == nil || m.sessions.Get(id) != nil || m.registry.Get(id) != nil {
		done(nil)
		return
	}
	waker := m.inbox.(session.Waker)
	async(m, func() woken {
		orphaned, err := waker.Orphaned(ctx, id)
		if err != nil || !orphaned {
			return woken{err: err}
		}
		log, err := store.Inspect(ctx, id)
		return woken{orphaned: true, log: log, err: err}
	}, func(w woken) {
		if w.err != nil || !w.orphaned {
			done(w.err)
			return
		}
		d, err := continuationState(id, w.log)
		if err != nil {
			done(err)
			return
		}
		owner := m.registry.Get(w.log.Header.ParentSession) // nil: the parent is not live here
		ms := materializeSpec{childID: id, provider: d.Provider, parent: owner, resume: resumeSpec(d)}
		m.materialize(ctx, ms, func(a *activation, err error) {
			if err != nil {
				done(err)
				return
			}
			m.replayPending(ctx, a, func(err error) {
				if err != nil {
					m.submitFailed(a, err, func(string, error) { done(err) })
					return
				}
				m.checkSettled(a)
				done(nil)
			})
		})
	})
}

// reusable is the log a cold resume read before it acquired the lease,
// or nil when other processes write the store (one that wakes): one may
// have appended between that read and the acquire, so the resume reads
// the log again once it holds the lease.
func (m *Manager) reusable(log *session.Log) *session.Log {
	if _, wakes := m.inbox.(session.Waker); wakes {
		return nil
	}
	return log
}

// elsewhere reports whether a cold resume's failure says another process
// holds the child's lease while the store wakes that process.
func (m *Manager) elsewhere(err error) bool {
	_, wakes := m.inbox.(session.Waker)
	return wakes && errors.Is(err, fault.LeaseHeld)
}

// admitElsewhere accepts a follow-up for a child another process holds:
// the DRAINING gate and the exact live parent here, then the message
// committed to the child's durable inbox (the store checks the parent's
// live epoch, the child's header and the drain cut-off in that step, and
// the commit wakes the holder). done gets the MessageID once committed.
func (m *Manager) admitElsewhere(ctx context.Context, req followupReq, done func(string, error)) {
	if err := m.admitWithContext(ctx, req.parent); err != nil {
		done("", err)
		return
	}
	if !m.registry.IsLive(req.parent) {
		done("", notExactParent(req.childID))
		return
	}
	msg := event.UserMessage{Content: req.content, Source: req.source, Role: "user", ID: inbox.NewMessageID()}
	body, err := vocab.Encode(msg)
	if err != nil {
		done("", err)
		return
	}
	admission := session.Admission{MessageID: msg.ID, From: req.parent.ID(), FromEpoch: req.parent.Session().Epoch(), Body: body}
	async(m, func() error {
		_, err := m.inbox.Admit(ctx, req.childID, admission)
		return err
	}, func(err error) {
		if err != nil {
			done("", notAdmitted(req.childID, err))
			return
		}
		done(msg.ID, nil)
	})
}

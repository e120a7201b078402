package manager

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/inbox"
)

// task is one decision run inside the manager's actor.
type task func()

// receiver is the protoactor face of the Manager.
type receiver Manager

// Receive runs tasks one at a time; it never blocks.
func (r *receiver) Receive(c actor.Context) {
	m := (*Manager)(r)
	m.self = c
	switch msg := c.Message().(type) {
	case task:
		m.runTask(msg)
	case *actor.Terminated:
		m.onTerminated(msg.Who)
	case *actor.Stopped:
		close(m.stopped)
	}
}

// runTask runs one decision; a panic (a bug) is logged and contained so
// the actor keeps serving, never restarted with its state lost.
func (m *Manager) runTask(fn task) {
	defer func() {
		if r := recover(); r != nil {
			m.logger.Error(fmt.Sprintf("subagent: continuation manager decision panicked: %v", r))
		}
	}()
	fn()
}

// post queues fn to run inside the actor, after everything posted before.
// After the actor stopped, fn is dropped (only late bus events can be).
func (m *Manager) post(fn func()) {
	m.haltMu.RLock()
	defer m.haltMu.RUnlock()
	if !m.halted {
		m.system.Root.Send(m.pid, task(fn))
	}
}

// halt stops the actor once; later posts are dropped instead of
// dead-lettered.
func (m *Manager) halt() {
	m.haltMu.Lock()
	already := m.halted
	m.halted = true
	m.haltMu.Unlock()
	if !already {
		m.system.Root.Stop(m.pid)
	}
}

// async runs work on its own goroutine and then posts then(result) back to
// the actor.
func async[T any](m *Manager, work func() T, then func(T)) {
	go func() {
		result := work()
		m.post(func() { then(result) })
	}()
}

// call posts op to the actor and waits for its reply. The actor guarantees a
// reply (it never drops an op), so the caller waits for the verdict even
// when ctx ends: ctx cancellation reaches the op at its next checkpoint.
func call[T any](m *Manager, ctx context.Context, op func(ctx context.Context, reply func(T, error))) (T, error) {
	var zero T
	if !m.ops.enter() {
		return zero, Draining()
	}
	defer m.ops.leave()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	m.post(func() {
		var once sync.Once
		reply := func(v T, err error) { once.Do(func() { done <- result{v, err} }) }
		defer func() {
			if r := recover(); r != nil {
				reply(zero, fmt.Errorf("subagent: continuation manager failed: %v", r))
				panic(r)
			}
		}()
		op(ctx, reply)
	})
	r := <-done
	return r.v, r.err
}

// onAgentEvent forwards the bus events the manager acts on to the actor:
// inbox dequeue/discard and status changes of managed children, and the
// disposal of scoped-drain roots. It runs on the publishing goroutine.
func (m *Manager) onAgentEvent(e parent.Event) {
	switch e.Type {
	case parent.EventDequeue, parent.EventDiscard:
		if m.hints.managed(e.AgentID) {
			m.post(func() { m.messageLeft(e.AgentID, e.Incarnation, e.MessageID) })
		}
	case parent.EventStatus:
		if e.Status == inbox.Idle && m.hints.settleable(e.AgentID, e.Incarnation) {
			m.post(func() { m.statusIdle(e.AgentID, e.Incarnation) })
		}
	case parent.EventDisposed:
		if m.hints.root(e.AgentID) {
			m.post(func() { m.rootDisposed(e.AgentID, e.Incarnation) })
		}
	}
}

// hints are id sets the bus listener reads to avoid posting events the
// actor would ignore. Only the actor writes them (so writers need no lock
// among themselves); listeners on any goroutine read them without a lock.
// They are filters, never decisions.
type hints struct {
	children sync.Map // child id → *childHint: resident children
	roots    sync.Map // scoped-drain root id → *int: roots with a cut-off (count read by the actor only)
}

// childHint counts the resident Activations of a child id (read and
// written by the actor only) and records, for listeners, the incarnation
// whose disposal is open: an idle status of it cannot settle it
// (checkSettled ignores an Activation with a disposal), so it is not
// posted.
type childHint struct {
	n         int
	disposing atomic.Uint64 // incarnation+1 of the open disposal, or 0
}

// managed reports whether id is a resident child.
func (h *hints) managed(id string) bool {
	_, ok := h.children.Load(id)
	return ok
}

// settleable reports whether an idle status of id's incarnation can
// still settle it: a resident child whose disposal is not open.
func (h *hints) settleable(id string, incarnation uint64) bool {
	c, ok := h.children.Load(id)
	return ok && c.(*childHint).disposing.Load() != incarnation+1
}

// childAdded counts a new resident Activation of id and returns the hint
// its disposal marks (actor only).
func (h *hints) childAdded(id string) *childHint {
	v, ok := h.children.Load(id)
	if !ok {
		v = &childHint{}
		h.children.Store(id, v)
	}
	c := v.(*childHint)
	c.n++
	return c
}

// disposalOpened records the open disposal of the hint's incarnation.
func (c *childHint) disposalOpened(incarnation uint64) { c.disposing.Store(incarnation + 1) }

// childGone uncounts the Activation of id's incarnation (actor only).
func (h *hints) childGone(id string, incarnation uint64) {
	v, ok := h.children.Load(id)
	if !ok {
		return
	}
	c := v.(*childHint)
	c.n--
	c.disposing.CompareAndSwap(incarnation+1, 0)
	if c.n <= 0 {
		h.children.Delete(id)
	}
}

// root reports whether id is a scoped-drain root with a cut-off.
func (h *hints) root(id string) bool {
	_, ok := h.roots.Load(id)
	return ok
}

// rootAdded and rootGone count the cut-offs of a root id (actor only).
func (h *hints) rootAdded(id string) {
	v, ok := h.roots.Load(id)
	if !ok {
		v = new(int)
		h.roots.Store(id, v)
	}
	*v.(*int)++
}

func (h *hints) rootGone(id string) {
	v, ok := h.roots.Load(id)
	if !ok {
		return
	}
	n := v.(*int)
	*n--
	if *n <= 0 {
		h.roots.Delete(id)
	}
}

// serial runs queued functions one at a time, in order, on a goroutine that
// exists only while there is work.
type serial struct {
	mu      sync.Mutex
	queue   []func()
	running bool
}

func (s *serial) run(fn func()) {
	s.mu.Lock()
	s.queue = append(s.queue, fn)
	if s.running {
		s.mu.Unlock()
		return
	}
	s.running = true
	s.mu.Unlock()
	go s.drain()
}

// drain runs what is queued, taking the whole queue at each round.
func (s *serial) drain() {
	var batch []func()
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.running = false
			s.mu.Unlock()
			return
		}
		batch, s.queue = s.queue, batch[:0]
		s.mu.Unlock()
		for i, fn := range batch {
			fn()
			batch[i] = nil
		}
	}
}

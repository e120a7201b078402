package manager

import (
	"context"
	"fmt"
	"sync"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/actorkit"
)

// task is one decision run inside the manager's actor.
type task func()

// receiver is the protoactor face of the Manager.
type receiver Manager

// contain logs a decision's panic (a bug) so the actor keeps serving,
// never restarted with its state lost.
func (m *Manager) contain() {
	if r := recover(); r != nil {
		m.logger.Error(fmt.Sprintf("subagent: continuation manager decision panicked: %v", r))
	}
}

// post queues fn to run inside the actor, after everything posted before.
// After the actor stopped, fn is dropped (only late bus events can be).
func (m *Manager) post(fn func()) { m.send(task(fn)) }

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
	if err := m.refusal(ctx); err != nil {
		return zero, err
	}
	if !m.ops.enter() {
		return zero, draining()
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
	return r.v, actorkit.Cancellation(ctx, r.err)
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

// onChildEvent forwards the events of a's agent the actor acts on:
// a message dequeued or discarded, and an idle status that can still
// settle a. It is a's own observer, so it runs on the publishing
// goroutine with no lookup.
func (m *Manager) onChildEvent(a *activation, e parent.Event) {
	switch e.Type {
	case inbox.Dequeue:
		m.send(childEvent{a, e})
	case inbox.Discard:
		m.settleDiscarded(a, e.MessageID)
		m.send(childEvent{a, e})
	case inbox.StatusChange:
		if e.Status == inbox.Idle && !a.disposing.Load() {
			m.send(childEvent{a, e})
		}
	}
}

// onAgentEvent forwards to the actor the disposal of a scoped-drain root,
// which ends its cut-off, and of a parent whose children have remembered
// ends, which drops them. It runs on the publishing goroutine.
func (m *Manager) onAgentEvent(e parent.Event) {
	if e.Type != parent.EventDisposed {
		return
	}
	if m.roots.has(e.AgentID) || m.endParents.has(e.AgentID) {
		m.send(agentDisposed{e.AgentID, e.Incarnation})
	}
}

// rootHints are the agent ids whose disposal the bus listener posts to the
// actor (scoped-drain roots with a cut-off; parents of remembered ends),
// so it does not post the disposal of other agents. Only the actor writes
// them; listeners on any goroutine read them without a lock. They are a
// filter, never a decision.
type rootHints struct {
	ids sync.Map // id → *int: its count (read by the actor only)
}

// has reports whether id is counted.
func (h *rootHints) has(id string) bool {
	_, ok := h.ids.Load(id)
	return ok
}

// added and gone count the cut-offs of a root id (actor only).
func (h *rootHints) added(id string) {
	v, ok := h.ids.Load(id)
	if !ok {
		v = new(int)
		h.ids.Store(id, v)
	}
	*v.(*int)++
}

func (h *rootHints) gone(id string) {
	v, ok := h.ids.Load(id)
	if !ok {
		return
	}
	n := v.(*int)
	*n--
	if *n <= 0 {
		h.ids.Delete(id)
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

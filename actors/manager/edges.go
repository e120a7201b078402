package manager

import (
	"fmt"
	"sync"
)

// The lifecycle edges, emitted in order on one goroutine off the actor
// (the edge queue's): a start always precedes its end, a child's end its
// parent's, and a remembered end is handed over after the ends queued
// before it.
type (
	// startEdge publishes o's epoch (info) with Options.Started, notes
	// in edge whether it was, and sends the outcome back (startEmitted).
	startEdge struct {
		o    *op
		info RunInfo
		edge *edge
	}
	// endEdge publishes an epoch's end with Options.Ended when its start
	// was published, settles its disposal and hands the end to its
	// waiters.
	endEdge struct {
		end     *RunEndInfo
		edge    *edge
		d       *disposal
		waiters []chan RunEndInfo
	}
	// endHandOver gives a remembered end to a WaitEpoch caller.
	endHandOver struct {
		w   chan RunEndInfo
		end RunEndInfo
	}
)

// edgeQueue holds the edges not emitted yet; a goroutine runs it only
// while there are some.
type edgeQueue struct {
	mu      sync.Mutex
	queue   []any
	running bool
}

// push queues e; it starts the emitting goroutine when none runs.
func (m *Manager) pushEdge(e any) {
	q := &m.edges
	q.mu.Lock()
	q.queue = append(q.queue, e)
	if q.running {
		q.mu.Unlock()
		return
	}
	q.running = true
	q.mu.Unlock()
	go m.emitEdges()
}

// emitEdges emits what is queued, taking the whole queue at each round,
// until it is empty.
func (m *Manager) emitEdges() {
	q := &m.edges
	var batch []any
	for {
		q.mu.Lock()
		if len(q.queue) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		batch, q.queue = q.queue, batch[:0]
		q.mu.Unlock()
		for i, e := range batch {
			m.emitEdge(e)
			batch[i] = nil
		}
	}
}

// emitEdge emits one edge.
func (m *Manager) emitEdge(e any) {
	switch e := e.(type) {
	case startEdge:
		err := m.started(e.info)
		e.edge.startOK = err == nil
		m.send(startEmitted{e.o, err})
	case endEdge:
		if e.edge.startOK {
			m.ended(*e.end)
		}
		e.d.settle()
		for _, w := range e.waiters {
			w <- *e.end
		}
	case endHandOver:
		e.w <- e.end
	}
}

// started calls Options.Started, turning its panic into a publication
// failure.
func (m *Manager) started(info RunInfo) (err error) {
	defer publicationPanicked(&err)
	if m.onStarted == nil {
		return nil
	}
	return m.onStarted(info)
}

// publicationPanicked turns a panic of Options.Started into *err.
func publicationPanicked(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("subagent: subagent/start publication failed: %v", r)
	}
}

// ended calls Options.Ended, containing its panic.
func (m *Manager) ended(info RunEndInfo) {
	defer m.endListenerPanicked()
	if m.onEnded != nil {
		m.onEnded(info)
	}
}

// endListenerPanicked logs a panic of Options.Ended.
func (m *Manager) endListenerPanicked() {
	if r := recover(); r != nil {
		m.logger.Warn(fmt.Sprintf("subagent: subagent/end listener threw: %v", r))
	}
}

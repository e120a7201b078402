package dispatch

import (
	"sync"

	"github.com/asynkron/protoactor-go/actor"
)

// Pool is a protoactor Dispatcher backed by a fixed set of long-lived
// goroutines. Schedule hands the mailbox run to an idle worker, or starts a
// goroutine when every worker is busy, so it never blocks and never loses
// work, also after Close.
type Pool struct {
	work       chan func()
	quit       chan struct{}
	throughput int
	closeOnce  sync.Once
	workers    sync.WaitGroup
}

var _ actor.Dispatcher = (*Pool)(nil)

// NewPool starts workers goroutines (at least one) dispatching mailbox runs
// of up to throughput messages each.
func NewPool(workers, throughput int) *Pool {
	p := &Pool{work: make(chan func()), quit: make(chan struct{}), throughput: throughput}
	for range max(workers, 1) {
		p.workers.Add(1)
		go p.serve()
	}
	return p
}

func (p *Pool) serve() {
	defer p.workers.Done()
	for {
		select {
		case fn := <-p.work:
			fn()
		case <-p.quit:
			return
		}
	}
}

// Schedule runs fn on an idle worker, or on a new goroutine when none is
// idle. It never blocks.
func (p *Pool) Schedule(fn func()) {
	select {
	case p.work <- fn:
	default:
		go fn()
	}
}

// Throughput is the number of messages a mailbox run may process before it
// yields.
func (p *Pool) Throughput() int { return p.throughput }

// Close stops the workers and waits for them to finish the runs they hold.
// Later Schedule calls start a goroutine each. Idempotent.
func (p *Pool) Close() {
	p.closeOnce.Do(func() { close(p.quit) })
	p.workers.Wait()
}

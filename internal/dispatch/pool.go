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
	work       chan task
	quit       chan struct{}
	throughput int
	closeOnce  sync.Once
	workers    sync.WaitGroup
}

var _ actor.Dispatcher = (*Pool)(nil)

// Runner is work that runs itself: a mailbox handed over as a Runner
// rather than as a method value costs no allocation per run.
type Runner = interface{ Run() }

// task is one unit of work: fn, or r when fn is nil.
type task struct {
	fn func()
	r  Runner
}

func (t task) run() {
	if t.fn != nil {
		t.fn()
		return
	}
	t.r.Run()
}

// NewPool starts workers goroutines (at least one) dispatching mailbox runs
// of up to throughput messages each.
func NewPool(workers, throughput int) *Pool {
	p := &Pool{work: make(chan task), quit: make(chan struct{}), throughput: throughput}
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
		case t := <-p.work:
			t.run()
		case <-p.quit:
			return
		}
	}
}

// Schedule runs fn on an idle worker, or on a new goroutine when none is
// idle. It never blocks.
func (p *Pool) Schedule(fn func()) { p.hand(task{fn: fn}) }

// ScheduleRunner is Schedule of r.Run, without the closure.
func (p *Pool) ScheduleRunner(r Runner) { p.hand(task{r: r}) }

// hand gives t to an idle worker, or to a new goroutine when none is
// idle.
func (p *Pool) hand(t task) {
	select {
	case p.work <- t:
	default:
		go t.run()
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

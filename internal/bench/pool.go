package bench

import (
	"sync"

	"github.com/asynkron/protoactor-go/actor"
)

// pool is a protoactor Dispatcher of the design the runtime runs its
// actors on: a fixed set of long-lived goroutines; Schedule hands a
// mailbox run to an idle one, or starts a goroutine when every one is
// busy, so it never blocks and never loses work, also after close. The
// drain floor runs on it so that its actors are dispatched as the
// runtime's are.
type pool struct {
	work       chan func()
	quit       chan struct{}
	throughput int
	closeOnce  sync.Once
	workers    sync.WaitGroup
}

var _ actor.Dispatcher = (*pool)(nil)

// mailboxThroughput is how many messages a mailbox run of the floor's
// actors handles before it yields, as the runtime's inboxes do.
const mailboxThroughput = 300

// newPool starts workers goroutines (at least one) dispatching mailbox
// runs of up to mailboxThroughput messages each.
func newPool(workers int) *pool {
	p := &pool{work: make(chan func()), quit: make(chan struct{}), throughput: mailboxThroughput}
	for range max(workers, 1) {
		p.workers.Go(p.serve)
	}
	return p
}

func (p *pool) serve() {
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
func (p *pool) Schedule(fn func()) {
	select {
	case p.work <- fn:
	default:
		go fn()
	}
}

// Throughput is the number of messages a mailbox run may process before
// it yields.
func (p *pool) Throughput() int { return p.throughput }

// close stops the workers and waits for them to finish the runs they
// hold. Idempotent.
func (p *pool) close() {
	p.closeOnce.Do(func() { close(p.quit) })
	p.workers.Wait()
}

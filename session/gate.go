package session

import "sync/atomic"

// gate admits writers until it is closed, then lets close wait for the
// admitted ones to leave. It replaces a mutex-guarded flag and WaitGroup
// on the write path: entering and leaving are one atomic operation each,
// so concurrent writers of different logs share no lock.
type gate struct {
	state   atomic.Int64  // writers<<1 | closed
	drained chan struct{} // closed once closed and no writer is left
}

func newGate() *gate { return &gate{drained: make(chan struct{})} }

// enter admits one writer; false once the gate is closed.
func (g *gate) enter() bool {
	for {
		v := g.state.Load()
		if v&1 != 0 {
			return false
		}
		if g.state.CompareAndSwap(v, v+2) {
			return true
		}
	}
}

// leave ends an admitted writer; the last one to leave a closed gate
// releases close.
func (g *gate) leave() {
	if g.state.Add(-2) == 1 {
		close(g.drained)
	}
}

// isClosed reports whether close has been called.
func (g *gate) isClosed() bool { return g.state.Load()&1 != 0 }

// close refuses new writers and blocks until every admitted one has left.
// It is idempotent.
func (g *gate) close() {
	if g.state.Or(1) == 0 {
		close(g.drained)
	}
	<-g.drained
}

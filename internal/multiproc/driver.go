package multiproc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Acked is a follow-up a node acknowledged: it must reach Child's log.
type Acked struct {
	Node, Child, MessageID string
}

// family is a parent, its children and the node it is live on.
type family struct {
	parent   string
	children []string
	home     *Node
}

// Driver sends follow-ups ("reply pong N") to the children of the parents
// it was given, each through the node its parent is live on, skipping
// nodes marked down; it records every acknowledged message and counts
// the refused ones.
type Driver struct {
	mu       sync.RWMutex
	families []*family
	down     map[*Node]bool
	inflight map[*Node]*sync.WaitGroup

	ackedMu sync.Mutex
	acked   []Acked
	failed  atomic.Int64 // refused (an RPC error)
	unknown atomic.Int64 // no answer (the node died): maybe accepted
	errs    []error

	stop context.CancelFunc
	done sync.WaitGroup
}

// NewDriver returns a driver with no parents; Add gives it some.
func NewDriver() *Driver {
	return &Driver{down: map[*Node]bool{}, inflight: map[*Node]*sync.WaitGroup{}}
}

// Add makes the children of parent targets, sent through home.
func (d *Driver) Add(home *Node, parent string, children []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.families = append(d.families, &family{parent: parent, children: children, home: home})
	if d.inflight[home] == nil {
		d.inflight[home] = &sync.WaitGroup{}
	}
}

// Quiet marks n down and blocks until no send through n is in flight;
// from then on the driver sends nothing through n.
func (d *Driver) Quiet(n *Node) {
	d.mu.Lock()
	d.down[n] = true
	wg := d.inflight[n]
	d.mu.Unlock()
	if wg != nil {
		wg.Wait()
	}
}

// Rehome moves parent's sends to node to (which must have taken it over)
// and marks to up.
func (d *Driver) Rehome(parent string, to *Node) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, f := range d.families {
		if f.parent == parent {
			f.home = to
		}
	}
	delete(d.down, to)
	if d.inflight[to] == nil {
		d.inflight[to] = &sync.WaitGroup{}
	}
}

// Parents returns the parents homed on n.
func (d *Driver) Parents(n *Node) []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	var out []string
	for _, f := range d.families {
		if f.home == n {
			out = append(out, f.parent)
		}
	}
	return out
}

// Run starts workers goroutines sending until Wait.
func (d *Driver) Run(workers int) {
	ctx, cancel := context.WithCancel(context.Background())
	d.stop = cancel
	var next atomic.Int64
	for range workers {
		d.done.Go(func() {
			for ctx.Err() == nil {
				if !d.sendOne(ctx, next.Add(1)) {
					_ = pause(ctx, 5*time.Millisecond) // every node down: wait for one to come back
				}
			}
		})
	}
}

// sendOne sends the i-th follow-up to a child whose parent's home is up;
// false when there is none.
func (d *Driver) sendOne(ctx context.Context, i int64) bool {
	d.mu.RLock()
	var target *family
	for k := range d.families {
		f := d.families[(int(i)+k)%len(d.families)]
		if !d.down[f.home] {
			target = f
			break
		}
	}
	if target == nil {
		d.mu.RUnlock()
		return false
	}
	home, parent, child := target.home, target.parent, target.children[int(i)%len(target.children)]
	wg := d.inflight[home]
	wg.Add(1)
	d.mu.RUnlock()
	defer wg.Done()
	id, err := home.Followup(context.WithoutCancel(ctx), parent, child, fmt.Sprintf("reply pong %d", i))
	if err != nil {
		err = fmt.Errorf("%w (to child %s through node %s)", err, child, home.Name)
	}
	d.record(Acked{Node: home.Name, Child: child, MessageID: id}, err)
	return true
}

// record files one send's outcome: acknowledged, refused, or without an
// answer (the transport failed: a killed node's outcome is unknown, so it
// is neither checked nor counted as refused).
func (d *Driver) record(a Acked, err error) {
	d.ackedMu.Lock()
	defer d.ackedMu.Unlock()
	var refused *RPCError
	if err != nil && !errors.As(err, &refused) {
		d.unknown.Add(1)
		return
	}
	if err != nil {
		d.failed.Add(1)
		if len(d.errs) < 5 {
			d.errs = append(d.errs, err)
		}
		return
	}
	d.acked = append(d.acked, a)
}

// Unanswered is the number of sends that got no answer (their node
// died).
func (d *Driver) Unanswered() int { return int(d.unknown.Load()) }

// Wait stops the workers and returns every acknowledged follow-up, the
// number refused and the first few refusals.
func (d *Driver) Wait() (acked []Acked, failed int, errs []error) {
	if d.stop != nil {
		d.stop()
	}
	d.done.Wait()
	d.ackedMu.Lock()
	defer d.ackedMu.Unlock()
	return append([]Acked(nil), d.acked...), int(d.failed.Load()), d.errs
}

package host

import (
	"context"
	"sync"
)

// catalogReads coalesces concurrent catalog reads of one parent. A caller
// joins the next read that starts after it arrived, never one already
// running, so every answer reflects the catalog as of after its request:
// per parent at most one read runs and one more gathers callers. A read
// whose callers all went away is cancelled (or never started).
type catalogReads struct {
	list    func(ctx context.Context, parentID string) ([]catalogEntry, error)
	mu      sync.Mutex
	pending map[string]*catalogRead // gathering callers, not started
	running map[string]bool
}

// catalogRead is one shared ListChildren call; its fields after done are
// read-only.
type catalogRead struct {
	done    chan struct{}
	entries []catalogEntry
	err     error
	waiters int
	started bool
	cancel  context.CancelFunc
}

func newCatalogReads(list func(ctx context.Context, parentID string) ([]catalogEntry, error)) *catalogReads {
	return &catalogReads{list: list, pending: map[string]*catalogRead{}, running: map[string]bool{}}
}

// read returns parentID's catalog from a read that started after this call,
// or ctx's error once ctx is done (a done ctx wins over a result).
func (c *catalogReads) read(ctx context.Context, parentID string) ([]catalogEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := c.join(parentID)
	select {
	case <-r.done:
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return r.entries, r.err
	case <-ctx.Done():
		c.leave(parentID, r)
		return nil, ctx.Err()
	}
}

func (c *catalogReads) join(parentID string) *catalogRead {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.pending[parentID]
	if r == nil {
		r = &catalogRead{done: make(chan struct{})}
		c.pending[parentID] = r
		if !c.running[parentID] {
			c.start(parentID, r)
		}
	}
	r.waiters++
	return r
}

// leave drops a caller; the last one cancels the read or unschedules it.
func (c *catalogReads) leave(parentID string, r *catalogRead) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r.waiters--
	if r.waiters > 0 {
		return
	}
	if r.started {
		r.cancel()
	} else if c.pending[parentID] == r {
		delete(c.pending, parentID)
	}
}

// start runs r (c.mu held); when it ends, the read gathered meanwhile, if
// any, starts.
func (c *catalogReads) start(parentID string, r *catalogRead) {
	delete(c.pending, parentID)
	c.running[parentID] = true
	ctx, cancel := context.WithCancel(context.Background())
	r.started, r.cancel = true, cancel
	go func() {
		defer cancel()
		r.entries, r.err = c.list(ctx, parentID)
		close(r.done)
		c.mu.Lock()
		defer c.mu.Unlock()
		if next := c.pending[parentID]; next != nil {
			c.start(parentID, next)
		} else {
			delete(c.running, parentID)
		}
	}()
}

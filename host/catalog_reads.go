package host

import (
	"context"
	"slices"
	"sync"

	"github.com/dsh-actors/dsh-actors/internal/jsjson"
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
	encoded map[string]encodedRows // the latest rows of recently listed parents
}

// catalogRead is one shared ListChildren call; its fields after done are
// read-only, but for the wire encoding its callers share (see wireRows).
type catalogRead struct {
	done    chan struct{}
	entries []catalogEntry
	err     error
	waiters int
	started bool
	cancel  context.CancelFunc

	wire     sync.Once // wireRows
	wireJSON []byte
	wireErr  error
}

// encodedRows is a parent's catalog and its subagent.list rows encoded.
type encodedRows struct {
	entries []catalogEntry
	rows    []byte
}

// wireRows is r's entries (r is a done read of parentID) as the JSON array
// of subagent.list's rows, shared read-only by every caller of r: the
// rows of the parent's previous read when its entries are equal, else
// encoded by the first caller that asks (the others block on it).
func (c *catalogReads) wireRows(parentID string, r *catalogRead) ([]byte, error) {
	r.wire.Do(func() {
		if rows, ok := c.reusable(parentID, r.entries); ok {
			r.wireJSON = rows
			return
		}
		r.wireJSON, r.wireErr = encodeRows(r.entries)
		if r.wireErr == nil { // a copy: the backend may reuse the slice it answered
			c.remember(parentID, encodedRows{entries: slices.Clone(r.entries), rows: r.wireJSON})
		}
	})
	return r.wireJSON, r.wireErr
}

func encodeRows(entries []catalogEntry) ([]byte, error) {
	rows := make([]any, len(entries))
	for i, e := range entries {
		rows[i] = toWireEntry(e)
	}
	return jsjson.Marshal(rows)
}

func (c *catalogReads) reusable(parentID string, entries []catalogEntry) ([]byte, bool) {
	c.mu.Lock()
	last, ok := c.encoded[parentID]
	c.mu.Unlock()
	if ok && slices.Equal(last.entries, entries) {
		return last.rows, true
	}
	return nil, false
}

// encodedParents bounds the parents whose latest rows are kept.
const encodedParents = 64

// remember keeps e as parentID's latest rows, dropping another parent's
// when encodedParents are kept already.
func (c *catalogReads) remember(parentID string, e encodedRows) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, kept := c.encoded[parentID]; !kept && len(c.encoded) >= encodedParents {
		for other := range c.encoded {
			delete(c.encoded, other)
			break
		}
	}
	c.encoded[parentID] = e
}

func newCatalogReads(list func(ctx context.Context, parentID string) ([]catalogEntry, error)) *catalogReads {
	return &catalogReads{list: list, pending: map[string]*catalogRead{}, running: map[string]bool{},
		encoded: map[string]encodedRows{}}
}

// read returns parentID's catalog from a read that started after this call,
// or ctx's error once ctx is done (a done ctx wins over a result).
func (c *catalogReads) read(ctx context.Context, parentID string) ([]catalogEntry, error) {
	r, err := c.share(ctx, parentID)
	if err != nil {
		return nil, err
	}
	return r.entries, r.err
}

// share is read's shared call itself, done, or ctx's error (a done ctx
// wins over a result); the caller reads r.err.
func (c *catalogReads) share(ctx context.Context, parentID string) (*catalogRead, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := c.join(parentID)
	select {
	case <-r.done:
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return r, nil
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

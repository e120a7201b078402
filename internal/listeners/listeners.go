// Package listeners holds List, the listener list behind every event fan-out
// of the runtime (the agent bus, the session registry's Subscribe and the
// subagent lifecycle events).
package listeners

import (
	"slices"
	"sync"
	"sync/atomic"
)

// List is a listener list published copy-on-write: Funcs reads the current
// list with one atomic load, no lock and no allocation, so events can be
// fanned out from many goroutines at once; Add and the cancels it returns
// replace the list under a lock. The zero List is empty and ready to use.
type List[E any] struct {
	mu   sync.Mutex // serializes Add and cancels
	next uint64
	cur  atomic.Pointer[snapshot[E]]
}

// snapshot is one immutable state of a List.
type snapshot[E any] struct {
	keys []uint64
	fns  []func(E)
}

// Add appends fn and returns its cancel, which removes fn and is
// idempotent. A fan-out already under way may or may not reach fn. Add and
// cancel block only on each other.
func (l *List[E]) Add(fn func(E)) (cancel func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	key := l.next
	cur := l.load()
	l.cur.Store(&snapshot[E]{keys: append(slices.Clone(cur.keys), key), fns: append(slices.Clone(cur.fns), fn)})
	return func() { l.remove(key) }
}

func (l *List[E]) remove(key uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.load()
	i := slices.Index(cur.keys, key)
	if i < 0 {
		return
	}
	l.cur.Store(&snapshot[E]{
		keys: slices.Delete(slices.Clone(cur.keys), i, i+1),
		fns:  slices.Delete(slices.Clone(cur.fns), i, i+1),
	})
}

func (l *List[E]) load() *snapshot[E] {
	if p := l.cur.Load(); p != nil {
		return p
	}
	return &snapshot[E]{}
}

// Funcs returns the listeners in the order they were added, as the list is
// now. The slice is shared: callers must not modify it. It never blocks.
func (l *List[E]) Funcs() []func(E) {
	if p := l.cur.Load(); p != nil {
		return p.fns
	}
	return nil
}

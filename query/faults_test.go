package query

import (
	"context"
	"sync"
)

// faultQuerier wraps a Querier. Each hook, when set, runs instead of the
// inner call and receives it as next; calls are counted either way.
type faultQuerier struct {
	inner Querier

	onTrace      func(ctx context.Context, id string, next func() (*lineage, error)) (*lineage, error)
	onListEvents func(ctx context.Context, id string, next func() (*eventList, error)) (*eventList, error)
	onReadEvent  func(ctx context.Context, req readRequest, next func() (*eventWindow, error)) (*eventWindow, error)

	mu                   sync.Mutex
	traces, lists, reads int
}

func (f *faultQuerier) count(n *int) {
	f.mu.Lock()
	*n++
	f.mu.Unlock()
}

func (f *faultQuerier) calls() (traces, listEvents, reads int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.traces, f.lists, f.reads
}

func (f *faultQuerier) traceSession(ctx context.Context, id string) (*lineage, error) {
	f.count(&f.traces)
	next := func() (*lineage, error) { return f.inner.traceSession(ctx, id) }
	if f.onTrace != nil {
		return f.onTrace(ctx, id, next)
	}
	return next()
}

func (f *faultQuerier) listEvents(ctx context.Context, id string) (*eventList, error) {
	f.count(&f.lists)
	next := func() (*eventList, error) { return f.inner.listEvents(ctx, id) }
	if f.onListEvents != nil {
		return f.onListEvents(ctx, id, next)
	}
	return next()
}

func (f *faultQuerier) readEvent(ctx context.Context, req readRequest) (*eventWindow, error) {
	f.count(&f.reads)
	next := func() (*eventWindow, error) { return f.inner.readEvent(ctx, req) }
	if f.onReadEvent != nil {
		return f.onReadEvent(ctx, req, next)
	}
	return next()
}

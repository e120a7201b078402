package query

import (
	"context"
	"sync"
)

// faultQuerier wraps a Querier. Each hook, when set, runs instead of the
// inner call and receives it as next; calls are counted either way.
type faultQuerier struct {
	inner Querier

	onTrace      func(ctx context.Context, id string, next func() (*Trace, error)) (*Trace, error)
	onListEvents func(ctx context.Context, id string, next func() ([]EventRecord, error)) ([]EventRecord, error)
	onReadEvent  func(ctx context.Context, req ReadRequest, next func() (*Window, error)) (*Window, error)

	mu                        sync.Mutex
	traces, listEvents, reads int
}

func (f *faultQuerier) count(n *int) {
	f.mu.Lock()
	*n++
	f.mu.Unlock()
}

func (f *faultQuerier) calls() (traces, listEvents, reads int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.traces, f.listEvents, f.reads
}

func (f *faultQuerier) TraceSession(ctx context.Context, id string) (*Trace, error) {
	f.count(&f.traces)
	next := func() (*Trace, error) { return f.inner.TraceSession(ctx, id) }
	if f.onTrace != nil {
		return f.onTrace(ctx, id, next)
	}
	return next()
}

func (f *faultQuerier) ListEvents(ctx context.Context, id string) ([]EventRecord, error) {
	f.count(&f.listEvents)
	next := func() ([]EventRecord, error) { return f.inner.ListEvents(ctx, id) }
	if f.onListEvents != nil {
		return f.onListEvents(ctx, id, next)
	}
	return next()
}

func (f *faultQuerier) ReadEvent(ctx context.Context, req ReadRequest) (*Window, error) {
	f.count(&f.reads)
	next := func() (*Window, error) { return f.inner.ReadEvent(ctx, req) }
	if f.onReadEvent != nil {
		return f.onReadEvent(ctx, req, next)
	}
	return next()
}

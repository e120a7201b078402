package query

import (
	"bytes"
	"context"
	"errors"
	"slices"

	"github.com/dsh-actors/dsh-actors/fault"

	"github.com/dsh-actors/dsh-actors/session"
)

// readWindowMax is the largest Before or After a readRequest may ask for.
const readWindowMax = 50

// Query is the session query over the live-first merge of the
// live registry and the persistence store (nil store: live sessions only).
// It is safe for concurrent use and never writes: persisted logs are read
// with Store.Inspect, never Load.
type Query struct {
	sessions *session.Sessions
	store    session.Store
}

// New returns the query over sessions' live records and its store
// (sessions.Store(); nil means live sessions only). sessions must not be
// nil. Listing needs no live sessions at all: a CLI passes an empty
// registry over the store.
func New(sessions *session.Sessions) *Query {
	return &Query{sessions: sessions, store: sessions.Store()}
}

// liveHeaders returns the header of every live session, in creation order.
func (q *Query) liveHeaders() []session.Header {
	lives := q.sessions.List()
	headers := make([]session.Header, len(lives))
	for i, l := range lives {
		headers[i] = l.Header()
	}
	return headers
}

// liveLog returns a snapshot of id's live log (events shared, not to be
// modified), if id is live.
func (q *Query) liveLog(id string) (*session.Log, bool) {
	l := q.sessions.Get(id)
	if l == nil {
		return nil, false
	}
	return &session.Log{Header: l.Header(), Events: l.Events()}, true
}

// load reads one session's header and events: a live session from memory
// (the store is not touched), otherwise through one direct Store.Inspect.
//
// The original first re-listed the whole store and reported an id missing
// from that listing as not found; here the store's own ErrNotFound gives
// the same SESSION_QUERY_SESSION_NOT_FOUND without the O(C) scan, and the
// store is listed only when the read fails (inspectFailure), so every
// failure gets the original's code. A log that reads fine is returned even
// when some other log of the root would make a listing fail (a duplicate
// id, a misplaced log), where the original's listing-first read failed.
func (q *Query) load(ctx context.Context, id string) (*session.Log, error) {
	if err := cancelled(ctx); err != nil {
		return nil, err
	}
	if log, ok := q.liveLog(id); ok {
		return log, nil
	}
	if q.store == nil {
		return nil, sessionNotFound(id)
	}
	log, err := q.store.Inspect(ctx, id)
	if err != nil {
		return nil, q.inspectFailure(ctx, id, err)
	}
	if live, ok := q.liveLog(id); ok { // it became live meanwhile
		return live, nil
	}
	return log, nil
}

// inspectFailure maps a failed Store.Inspect of id. Only then is the store
// listed, to give the answer the original's list-first read gave: a failed
// listing is SESSION_QUERY_PERSISTENCE_FAILED ("session persistence listing
// failed: …"), an id the listing skips (a log whose first line is not a
// valid header) is SESSION_QUERY_SESSION_NOT_FOUND, and a listed log that
// cannot be read is SESSION_QUERY_PERSISTENCE_FAILED ("failed to inspect
// session …").
func (q *Query) inspectFailure(ctx context.Context, id string, err error) error {
	if ctxErr := cancelled(ctx); ctxErr != nil {
		return ctxErr
	}
	if errors.Is(err, session.ErrNotFound) {
		return sessionNotFound(id)
	}
	headers, listErr := q.store.List(ctx)
	if ctxErr := cancelled(ctx); ctxErr != nil {
		return ctxErr
	}
	if listErr != nil {
		return newError(fault.QueryPersistenceFailed, "session persistence listing failed: "+listErr.Error(), listErr)
	}
	if !slices.ContainsFunc(headers, func(h session.Header) bool { return h.ID == id }) {
		return sessionNotFound(id)
	}
	return newError(fault.QueryPersistenceFailed, `failed to inspect session "`+id+`": `+err.Error(), err)
}

// cloneEvent returns an event that shares no memory with e.
func cloneEvent(e session.Event) session.Event {
	e.Data = bytes.Clone(e.Data)
	e.SurfaceOp = bytes.Clone(e.SurfaceOp)
	e.SourceEventSeqs = slices.Clone(e.SourceEventSeqs)
	return e
}

// cloneHeader returns a header that shares no memory with h.
func cloneHeader(h session.Header) session.Header {
	if h.SeedLength != nil {
		n := *h.SeedLength
		h.SeedLength = &n
	}
	return h
}

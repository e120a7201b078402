package query

import (
	"context"

	"github.com/dsh-actors/dsh-actors/internal/catalog"
	"github.com/dsh-actors/dsh-actors/session"
)

// Catalog lists a parent's direct continuable children: ListChildren over
// a Querier, or a derived index that answers identically.
type Catalog interface {
	// ListChildren returns the entries ListChildren(ctx, q, parentID)
	// would, with the same whole-call failures.
	ListChildren(ctx context.Context, parentID string) ([]Entry, error)
}

// InspectChild is ListChildren's step for one direct child: it reads
// child (the header of a direct child of parentID from the trace; live
// when it is live in the registry) through q and returns its entry, nil
// when it is omitted (no own descriptor), or the error that fails the
// whole call. It ends with the between-children cancellation checkpoint,
// as ListChildren does after every child.
func InspectChild(ctx context.Context, q Querier, parentID string, child session.Header, live bool) (*Entry, error) {
	entry, err := inspectChild(ctx, q, parentID, catalog.Record{Header: child, Live: live})
	if err != nil {
		return nil, err
	}
	if err := catalog.Checkpoint(ctx); err != nil {
		return nil, err
	}
	return entry, nil
}

// InspectChildLog is InspectChild for a stored child whose log is already
// read: child (its listed header) as a direct child of its own parent,
// with log what a read of it returned. It reads nothing and blocks on
// nothing, and gives the entry InspectChild gives while the child is not
// live and its log reads as log; an error is one that would fail the
// whole listing.
func InspectChildLog(ctx context.Context, child session.Header, log *session.Log) (*Entry, error) {
	return inspectChild(ctx, readLog{log}, child.ParentSession, catalog.Record{Header: child, Persisted: true})
}

// readLog reads one child from its log already read.
type readLog struct{ log *session.Log }

func (r readLog) listEvents(_ context.Context, id string) (*eventList, error) {
	if id != r.log.Header.ID {
		return nil, sessionNotFound(id)
	}
	return eventsOf(id, r.log)
}

func (r readLog) readEvent(_ context.Context, req readRequest) (*eventWindow, error) {
	if err := validateWindow(req); err != nil {
		return nil, err
	}
	if req.SessionID != r.log.Header.ID {
		return nil, sessionNotFound(req.SessionID)
	}
	return windowOf(r.log, req)
}

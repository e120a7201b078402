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

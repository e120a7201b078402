package query

import (
	"context"

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
// candidate (a direct child of parentID from the trace) through q and
// returns its entry, nil when it is omitted (no own descriptor), or the
// error that fails the whole call. It ends with the between-children
// cancellation checkpoint, as ListChildren does after every child.
func InspectChild(ctx context.Context, q Querier, parentID string, candidate Record) (*Entry, error) {
	entry, err := inspectChild(ctx, q, parentID, candidate)
	if err != nil {
		return nil, err
	}
	if err := checkpoint(ctx); err != nil {
		return nil, err
	}
	return entry, nil
}

// ListingCheckpoint is the catalog's cancellation check: CANCELLED
// ("subagent listing was cancelled", wrapping ctx's cause) once ctx is
// done, else nil.
func ListingCheckpoint(ctx context.Context) error { return checkpoint(ctx) }

// CompatibleHeaders reports SESSION_QUERY_SOURCE_CONFLICT unless a and b
// agree on the immutable fields the live-first merge compares (version, id,
// createdAt, cwd, parentSession, seedLength, delegationDepth).
func CompatibleHeaders(a, b session.Header) error { return compatibleHeaders(a, b) }

// SiblingOrder is the trace's order of siblings: createdAt ascending, then
// id as the original's localeCompare orders ids.
func SiblingOrder(a, b Record) int { return siblingOrder(a, b) }

package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/catalog"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
)

var _ query.Catalog = (*Store)(nil)

// listChildrenSQL reads, in one statement, whether the parent is stored
// and each direct child (by createdAt; ListChildren orders ties as the
// catalog does) with its header line and the lines of the descriptors in its
// own suffix (seq at or after the header's seedLength).
const listChildrenSQL = `SELECT p.id IS NOT NULL, c.id, c.header_line,
		ARRAY(SELECT e.line FROM events e WHERE e.session_id = c.id AND e.type = $2
			AND e.seq >= COALESCE((c.header_line::jsonb->>'seedLength')::bigint, 0) ORDER BY e.seq)
	FROM (SELECT 1) AS one
	LEFT JOIN sessions p ON p.id = $1
	LEFT JOIN sessions c ON c.parent_id = $1 AND p.id IS NOT NULL
	ORDER BY c.created_at`

// ListChildren lists parentID's direct continuable children with one
// query and answers as query.ListChildren over this store does: a child
// without an own descriptor is omitted, one with several or with a
// descriptor that does not validate is a corrupt or unsupported
// diagnostic, a child live in this process (its lease held by this
// store, as the registry over it holds every live session's) is running
// and the others complete; siblings are in the catalog's order. An
// unknown parent is SESSION_QUERY_SESSION_NOT_FOUND, a failing database
// SUBAGENT_CONTROL_SESSION_QUERY_UNAVAILABLE and a done ctx CANCELLED.
// It never writes and never touches an activation.
func (s *Store) ListChildren(ctx context.Context, parentID string) ([]query.Entry, error) {
	if err := catalog.Checkpoint(ctx); err != nil {
		return nil, err
	}
	children, parentFound, err := s.readChildren(ctx, parentID)
	if err != nil {
		return nil, s.listingFailed(ctx, parentID, err)
	}
	if err := catalog.Checkpoint(ctx); err != nil {
		return nil, err
	}
	if !parentFound {
		return nil, fault.New(fault.QuerySessionNotFound, `session "`+parentID+`" not found`, nil)
	}
	slices.SortStableFunc(children, func(a, b childRow) int { return catalog.SiblingOrder(a.record, b.record) })
	entries := []query.Entry{}
	for _, c := range children {
		if entry, ok := childEntry(c); ok {
			entries = append(entries, entry)
		}
	}
	return entries, nil
}

// readChildren runs listChildrenSQL: the children whose header parses,
// and whether the parent is stored; a child whose header names another
// session fails it (checkNamed).
func (s *Store) readChildren(ctx context.Context, parentID string) (children []childRow, parentFound bool, err error) {
	rows, err := s.pool.Query(ctx, listChildrenSQL, parentID, vocab.TypeSubagentDescriptor)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, headerLine *string
		var descriptors []string
		if err := rows.Scan(&parentFound, &id, &headerLine, &descriptors); err != nil {
			return nil, false, err
		}
		var h session.Header
		if headerLine == nil || h.UnmarshalJSON([]byte(*headerLine)) != nil {
			continue // no child, or a header the JSONL listing skips
		}
		if err := checkNamed(*id, h); err != nil {
			return nil, false, err
		}
		children = append(children, childRow{catalog.Record{Header: h, Live: s.holds(h.ID), Persisted: true}, descriptors})
	}
	return children, parentFound, rows.Err()
}

// listingFailed is CANCELLED once ctx is done, else the database's
// failure as SUBAGENT_CONTROL_SESSION_QUERY_UNAVAILABLE.
func (s *Store) listingFailed(ctx context.Context, parentID string, err error) error {
	if cancelled := catalog.Checkpoint(ctx); cancelled != nil {
		return cancelled
	}
	return fault.New(fault.SessionQueryUnavailable, fmt.Sprintf(`pgstore: list the children of "%s": %v`, parentID, err), err)
}

// holds reports whether this store holds id's lease.
func (s *Store) holds(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.held[id]
	return ok
}

// childRow is one child as the query read it.
type childRow struct {
	record      catalog.Record
	descriptors []string // the lines of its own-suffix descriptors
}

// childEntry is the catalog entry of one child row; false when the child
// is omitted (no own descriptor).
func childEntry(c childRow) (query.Entry, bool) {
	id, descriptors := c.record.Header.ID, c.descriptors
	diagnostic := func(reason string) (query.Entry, bool) {
		return query.Entry{Kind: query.KindDiagnostic, ID: id, Reason: reason}, true
	}
	switch len(descriptors) {
	case 0:
		return query.Entry{}, false
	case 1:
	default:
		return diagnostic(query.ReasonCorrupt)
	}
	var e session.Event
	if err := e.UnmarshalJSON([]byte(descriptors[0])); err != nil {
		return diagnostic(query.ReasonCorrupt)
	}
	d, err := descriptor.Parse(e.Data)
	switch {
	case errors.Is(err, fault.DescriptorUnsupported):
		return diagnostic(query.ReasonUnsupported)
	case err != nil:
		return diagnostic(query.ReasonCorrupt)
	}
	status := query.StatusComplete
	if c.record.Live {
		status = query.StatusRunning
	}
	return query.Entry{Kind: query.KindChild, ID: id, Label: d.Label, Status: status}, true
}

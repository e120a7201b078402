package query

import (
	"context"
	"slices"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/catalog"
)

// lineageNode is one session of a lineage tree with its own direct children.
type lineageNode struct {
	Session     catalog.Record
	Descendants []lineageNode
}

// lineage is a session's lineage: the target, its ancestors (immediate
// parent first), and its descendants (the direct children, each with its
// subtree). Complete is true when the ancestry reaches a root (Root, the
// outermost ancestor or the target itself); otherwise UnresolvedParentID is
// the first parent id missing from the corpus.
type lineage struct {
	Target             catalog.Record
	Ancestors          []catalog.Record
	Descendants        []lineageNode
	Complete           bool
	Root               *catalog.Record
	UnresolvedParentID string
}

// traceSession observes the whole corpus once (one Store.List, no Inspect)
// and returns the lineage of id. Siblings are ordered by createdAt
// ascending, then by id as the original's localeCompare orders them
// (localeCompare).
//
// Errors: a listing failure is SESSION_QUERY_PERSISTENCE_FAILED; a
// live/persisted header conflict anywhere in the corpus is
// SESSION_QUERY_SOURCE_CONFLICT; an unknown id is
// SESSION_QUERY_SESSION_NOT_FOUND; a cycle in the ancestry is
// SESSION_QUERY_INVALID_LINEAGE. A done ctx returns context.Cause(ctx).
func (q *Query) traceSession(ctx context.Context, id string) (*lineage, error) {
	corpus, err := q.listSessions(ctx)
	if err != nil {
		return nil, err
	}
	target, ok := corpus[id]
	if !ok {
		return nil, sessionNotFound(id)
	}
	trace := &lineage{Target: target}
	if err := trace.followAncestors(corpus); err != nil {
		return nil, err
	}
	trace.Descendants = descendantsOf(id, corpus)
	return trace, nil
}

// listSessions is the live-first corpus: every persisted header, then
// every live session over it (checked for compatibility, the live header
// winning).
func (q *Query) listSessions(ctx context.Context) (map[string]catalog.Record, error) {
	if err := cancelled(ctx); err != nil {
		return nil, err
	}
	corpus := map[string]catalog.Record{}
	if q.store != nil {
		headers, err := q.store.List(ctx)
		if err != nil {
			if ctxErr := cancelled(ctx); ctxErr != nil {
				return nil, ctxErr
			}
			return nil, newError(fault.QueryPersistenceFailed, "session persistence listing failed: "+err.Error(), err)
		}
		for _, h := range headers {
			corpus[h.ID] = catalog.Record{Header: cloneHeader(h), Persisted: true}
		}
	}
	if err := cancelled(ctx); err != nil {
		return nil, err
	}
	for _, h := range q.liveHeaders() {
		stored, persisted := corpus[h.ID]
		if persisted {
			if err := catalog.CompatibleHeaders(h, stored.Header); err != nil {
				return nil, err
			}
		}
		corpus[h.ID] = catalog.Record{Header: cloneHeader(h), Live: true, Persisted: persisted}
	}
	return corpus, nil
}

func (t *lineage) followAncestors(corpus map[string]catalog.Record) error {
	seen := map[string]bool{t.Target.Header.ID: true}
	current := t.Target
	for current.Header.ParentSession != "" {
		parentID := current.Header.ParentSession
		if seen[parentID] {
			return newError(fault.QueryInvalidLineage, `session lineage contains a cycle at "`+parentID+`"`, nil)
		}
		parent, ok := corpus[parentID]
		if !ok {
			t.UnresolvedParentID = parentID
			return nil
		}
		seen[parentID] = true
		t.Ancestors = append(t.Ancestors, parent)
		current = parent
	}
	root := current
	t.Complete, t.Root = true, &root
	return nil
}

// descendantsOf builds the subtree below id without recursion (lineages
// can be thousands deep). The ancestry check has already ruled out cycles
// through id, so the walk terminates.
func descendantsOf(id string, corpus map[string]catalog.Record) []lineageNode {
	children := map[string][]catalog.Record{}
	for _, rec := range corpus {
		if p := rec.Header.ParentSession; p != "" {
			children[p] = append(children[p], rec)
		}
	}
	order := []string{id} // breadth-first: every parent before its children
	for i := 0; i < len(order); i++ {
		group := children[order[i]]
		slices.SortFunc(group, catalog.SiblingOrder)
		for _, rec := range group {
			order = append(order, rec.Header.ID)
		}
	}
	built := map[string][]lineageNode{}
	for i := len(order) - 1; i >= 0; i-- { // children before their parents
		parent := order[i]
		nodes := make([]lineageNode, 0, len(children[parent]))
		for _, rec := range children[parent] {
			nodes = append(nodes, lineageNode{Session: rec, Descendants: built[rec.Header.ID]})
			delete(built, rec.Header.ID)
		}
		built[parent] = nodes
	}
	return built[id]
}

package query

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"github.com/dsh-actors/dsh-actors/fault"
)

// lineageNode is one session of a lineage tree with its own direct children.
type lineageNode struct {
	Session     Record
	Descendants []lineageNode
}

// lineage is a session's lineage: the target, its ancestors (immediate
// parent first), and its descendants (the direct children, each with its
// subtree). Complete is true when the ancestry reaches a root (Root, the
// outermost ancestor or the target itself); otherwise UnresolvedParentID is
// the first parent id missing from the corpus.
type lineage struct {
	Target             Record
	Ancestors          []Record
	Descendants        []lineageNode
	Complete           bool
	Root               *Record
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
func (q *Query) listSessions(ctx context.Context) (map[string]Record, error) {
	if err := cancelled(ctx); err != nil {
		return nil, err
	}
	corpus := map[string]Record{}
	if q.store != nil {
		headers, err := q.store.List(ctx)
		if err != nil {
			if ctxErr := cancelled(ctx); ctxErr != nil {
				return nil, ctxErr
			}
			return nil, newError(fault.QueryPersistenceFailed, "session persistence listing failed: "+err.Error(), err)
		}
		for _, h := range headers {
			corpus[h.ID] = Record{Header: cloneHeader(h), Persisted: true}
		}
	}
	if err := cancelled(ctx); err != nil {
		return nil, err
	}
	for _, h := range q.liveHeaders() {
		stored, persisted := corpus[h.ID]
		if persisted {
			if err := compatibleHeaders(h, stored.Header); err != nil {
				return nil, err
			}
		}
		corpus[h.ID] = Record{Header: cloneHeader(h), Live: true, Persisted: persisted}
	}
	return corpus, nil
}

func (t *lineage) followAncestors(corpus map[string]Record) error {
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
func descendantsOf(id string, corpus map[string]Record) []lineageNode {
	children := map[string][]Record{}
	for _, rec := range corpus {
		if p := rec.Header.ParentSession; p != "" {
			children[p] = append(children[p], rec)
		}
	}
	order := []string{id} // breadth-first: every parent before its children
	for i := 0; i < len(order); i++ {
		group := children[order[i]]
		slices.SortFunc(group, siblingOrder)
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

func siblingOrder(a, b Record) int {
	if c := cmp.Compare(a.Header.CreatedAt, b.Header.CreatedAt); c != 0 {
		return c
	}
	return localeCompare(a.Header.ID, b.Header.ID)
}

// collators holds root-locale collators for localeCompare; a Collator
// keeps scratch buffers and is not safe for concurrent use.
var collators = sync.Pool{New: func() any { return collate.New(language.Und) }}

// localeCompare orders ids as JavaScript's a.localeCompare(b) does in the
// original (ICU's root collation): "a" < "A" < "b", "a_b" < "a-b" < "ab",
// "é" < "f". Ids that collate equal (canonically equivalent forms,
// ignorable characters) fall back to byte order, so the order stays total
// where the original kept the store's listing order.
func localeCompare(a, b string) int {
	c := collators.Get().(*collate.Collator)
	defer collators.Put(c)
	if r := c.CompareString(a, b); r != 0 {
		return r
	}
	return strings.Compare(a, b)
}

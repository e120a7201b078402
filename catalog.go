package dsh

import (
	"context"
	"errors"
	"strings"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/query"
)

// Children lists parentID's direct continuable children from the durable
// catalog, never waking one, in creation order (then id): each with its
// Label and Status ("running" when it is live in this runtime, "complete"
// when it is only stored, which is no outcome: a Send runs a new turn), or,
// for a child whose log cannot be read, its Diagnostic ("corrupt",
// "unsupported" or "unavailable"). On a JSONL store folder the derived
// index answers (opened on first use, unless Options.NoIndex), on a
// Postgres store one query does, and both answer exactly as reading the
// logs does. An unknown parent is fault.QuerySessionNotFound, a closed
// runtime fault.Closed. It blocks on the reads (the first one on a JSONL
// folder also builds or brings up to date the index: one read of each
// changed log).
func (r *Runtime) Children(ctx context.Context, parentID string) ([]agent.Child, error) {
	catalog, err := r.catalog(ctx)
	if err != nil {
		return nil, err
	}
	entries, err := r.subagents.ListChildrenFrom(ctx, catalog, parentID)
	if err != nil {
		return nil, err
	}
	children := make([]agent.Child, len(entries))
	for i, e := range entries {
		children[i] = agent.Child{ID: e.ID, Label: e.Label, Status: e.Status}
		if e.Kind == query.KindDiagnostic {
			children[i] = agent.Child{ID: e.ID, Diagnostic: e.Reason}
		}
	}
	return children, nil
}

// RenderChildren renders children as the model-facing list_agents tool
// does, one line per child in order: "<id> [<status>] — <label>" (an em
// dash with a space either side), "<id> [diagnostic: <reason>]" for a
// child that cannot be read, and "(no subagents)" for none; no trailing
// newline. It does not block.
func RenderChildren(children []agent.Child) string {
	if len(children) == 0 {
		return query.RenderListAgents(nil)
	}
	lines := make([]string, len(children))
	for i, c := range children {
		lines[i] = entryOf(c).String()
	}
	return strings.Join(lines, "\n")
}

// entryOf is c as the catalog reader's entry.
func entryOf(c agent.Child) query.Entry {
	if c.Diagnostic != "" {
		return query.Entry{Kind: query.KindDiagnostic, ID: c.ID, Reason: c.Diagnostic}
	}
	return query.Entry{Kind: query.KindChild, ID: c.ID, Label: c.Label, Status: c.Status}
}

// catalog is what answers Children: the store's own catalog (the Postgres
// store's one query), the derived index of a JSONL store folder, or nil
// for the unindexed reader (a memory-only runtime, Options.NoIndex).
func (r *Runtime) catalog(ctx context.Context) (query.Catalog, error) {
	if err := r.actors.Err(); err != nil {
		return nil, err
	}
	if r.index.noIndex {
		return nil, nil
	}
	if c, ok := r.actors.Sessions().Store().(query.Catalog); ok {
		return c, nil
	}
	db, err := r.index.open(ctx)
	switch {
	case errors.Is(err, fault.Cancelled):
		return nil, nil // the listing reports its own cancellation
	case db == nil:
		return nil, err
	}
	return db, nil
}

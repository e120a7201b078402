package index

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/dsh-actors/dsh-actors/fault"

	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
)

var _ query.Catalog = (*DB)(nil)

// Child states stored for a persisted direct child: the stable outcomes of
// its catalog read. An unavailable read is never stored.
const (
	stateOmitted = iota
	stateChild
	stateCorrupt
	stateUnsupported
)

// ListChildren returns exactly what query.ListChildren over the unindexed
// query of the same sessions returns. In order: the cancellation check;
// bringing the index up to date (the cheap check of the view, a full
// reconciliation when the listing may have changed); the live-first checks
// of the trace (every live header against its stored one, the parent's
// existence, its ancestry), any of whose failures hands the whole call to
// the unindexed reader; then the direct children in trace order, a live
// one read live, a stored one from its indexed outcome when that was
// derived from its current revision, else read (through the unindexed
// reader's per-child step) and recorded.
func (d *DB) ListChildren(ctx context.Context, parentID string) ([]query.Entry, error) {
	if err := query.ListingCheckpoint(ctx); err != nil {
		return nil, err
	}
	children, ok, err := d.candidates(ctx, parentID)
	if errors.Is(err, errListing) || (err == nil && !ok) {
		return query.ListChildren(ctx, d.oracle, parentID)
	}
	if err != nil {
		return nil, d.failure(ctx, err)
	}
	return d.entries(ctx, parentID, children)
}

// failure maps an index failure: CANCELLED once ctx is done, else the
// error wrapped as SESSION_QUERY_INDEX_FAILED.
func (d *DB) failure(ctx context.Context, err error) error {
	if cpErr := query.ListingCheckpoint(ctx); cpErr != nil {
		return cpErr
	}
	return fault.New(fault.QueryIndexFailed, "session index failed: "+err.Error(), err)
}

// candidate is one direct child in trace order, with its indexed outcome.
type candidate struct {
	record   query.Record
	fresh    bool // the outcome below was derived from the current log
	state    int
	label    string
	revision string
}

// candidates brings the view up to date and reads parentID's direct
// children from it (see view.directChildren). A log whose header changed
// under the view makes it reconcile fully once more; a second change hands
// the call to the unindexed reader (ok false).
func (d *DB) candidates(ctx context.Context, parentID string) ([]candidate, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.view != nil {
		overflow := d.watch.drain(func(id string) { d.view.changed(id, false) })
		if overflow {
			d.view.changed("", true)
		}
	}
	for range 2 {
		if err := d.current(ctx); err != nil {
			return nil, false, err
		}
		children, ok, headersHeld := d.view.directChildren(d.root, parentID, d.sessions.List())
		if headersHeld {
			return children, ok, nil
		}
		d.view = nil
	}
	return nil, false, nil
}

// current keeps the view when the listing cannot have changed since it was
// taken, else reconciles the index fully and takes a new view. d.mu is held.
func (d *DB) current(ctx context.Context) error {
	if d.view != nil && d.view.unchanged(d.root) {
		return nil
	}
	d.view = nil
	obs, err := d.reconcileLocked(ctx)
	if err != nil {
		return err
	}
	v, err := d.load(ctx, obs)
	if err != nil {
		return err
	}
	d.view = v
	return nil
}

// directChildren is the trace's part ListChildren needs: the direct
// children of parentID in sibling order, each stored one with the current
// revision of its log. ok is false when the trace would fail (a source
// conflict, an unknown parent, a cycle): the caller then asks the
// unindexed reader, which reports that failure exactly. headersHeld is
// false when a log read on the way (the parent's lineage, a child) no
// longer starts with its indexed header.
func (v *view) directChildren(root, parentID string, live []*session.Live) (children []candidate, ok, headersHeld bool) {
	lives := map[string]session.Header{}
	for _, l := range live {
		h := l.Header()
		if s, found := v.sessions[h.ID]; found && query.CompatibleHeaders(h, s.header) != nil {
			return nil, false, true
		}
		lives[h.ID] = h
	}
	t := now()
	if ok, held := v.hasAcyclicLineage(root, parentID, lives, t); !ok || !held {
		return nil, false, held
	}
	children = make([]candidate, 0, len(v.children[parentID]))
	for _, s := range v.children[parentID] {
		rev, held := v.revisionOf(root, s, t)
		if !held {
			return nil, false, false
		}
		c := candidate{record: query.Record{Header: s.header, Persisted: true}, revision: rev,
			state: s.outcome.state, label: s.outcome.label}
		c.fresh = s.outcome.revision != "" && s.outcome.revision == rev && rev != racy
		if h, isLive := lives[s.header.ID]; isLive {
			c.record = query.Record{Header: h, Live: true, Persisted: true}
		}
		children = append(children, c)
	}
	for id, h := range lives {
		if h.ParentSession == parentID && !slices.ContainsFunc(children, func(c candidate) bool { return c.record.Header.ID == id }) {
			children = append(children, candidate{record: query.Record{Header: h, Live: true}})
		}
	}
	slices.SortFunc(children, func(a, b candidate) int { return query.SiblingOrder(a.record, b.record) })
	return children, true, true
}

// hasAcyclicLineage reports whether id is in the corpus and its ancestry
// never returns to a session already seen; held is false when a stored
// ancestor's log no longer starts with its indexed header.
func (v *view) hasAcyclicLineage(root, id string, lives map[string]session.Header, t time.Time) (ok, held bool) {
	seen := map[string]bool{}
	for current := id; current != ""; {
		if seen[current] {
			return false, true
		}
		seen[current] = true
		h, found := lives[current]
		if !found {
			s, stored := v.sessions[current]
			if !stored {
				return current != id, true // an unresolved parent ends the ancestry
			}
			if _, held := v.revisionOf(root, s, t); !held {
				return false, false
			}
			h = s.header
		}
		current = h.ParentSession
	}
	return true, true
}

// entries reads the candidates in order, recording the outcomes it derived.
func (d *DB) entries(ctx context.Context, parentID string, children []candidate) ([]query.Entry, error) {
	out := make([]query.Entry, 0, len(children))
	var derived []candidate
	for _, c := range children {
		entry, err := d.entry(ctx, parentID, &c)
		if err != nil {
			return nil, err
		}
		if !c.fresh && !c.record.Live && c.revision != "" && c.revision != racy && stateOf(entry, &c) {
			derived = append(derived, c)
		}
		if entry != nil {
			out = append(out, *entry)
		}
	}
	if err := query.ListingCheckpoint(ctx); err != nil {
		return nil, err
	}
	if len(derived) > 0 {
		d.record(ctx, derived)
	}
	return out, nil
}

func (d *DB) entry(ctx context.Context, parentID string, c *candidate) (*query.Entry, error) {
	if !c.fresh || c.record.Live {
		return query.InspectChild(ctx, d.oracle, parentID, c.record)
	}
	id := c.record.Header.ID
	switch c.state {
	case stateChild:
		return &query.Entry{Kind: query.KindChild, ID: id, Label: c.label, Status: query.StatusComplete}, nil
	case stateCorrupt:
		return &query.Entry{Kind: query.KindDiagnostic, ID: id, Reason: query.ReasonCorrupt}, nil
	case stateUnsupported:
		return &query.Entry{Kind: query.KindDiagnostic, ID: id, Reason: query.ReasonUnsupported}, nil
	}
	return nil, nil
}

// stateOf sets c's state from a derived entry; false for an outcome that
// is not stable (unavailable).
func stateOf(e *query.Entry, c *candidate) bool {
	switch {
	case e == nil:
		c.state = stateOmitted
	case e.Kind == query.KindChild:
		c.state, c.label = stateChild, e.Label
	case e.Reason == query.ReasonCorrupt:
		c.state = stateCorrupt
	case e.Reason == query.ReasonUnsupported:
		c.state = stateUnsupported
	default:
		return false
	}
	return true
}

// record stores derived outcomes under the revision they were read at.
// It is an optimization: a failure only means the next call reads again.
func (d *DB) record(ctx context.Context, derived []candidate) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.view != nil {
		for _, c := range derived {
			if s, ok := d.view.sessions[c.record.Header.ID]; ok {
				s.outcome = outcome{revision: c.revision, state: c.state, label: c.label}
			}
		}
	}
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return
	}
	defer func() { _ = tx.Rollback() }()
	for _, c := range derived {
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET child_revision = ?, child_state = ?, label = ? WHERE id = ?`,
			c.revision, c.state, c.label, c.record.Header.ID); err != nil {
			return
		}
	}
	_ = tx.Commit()
}

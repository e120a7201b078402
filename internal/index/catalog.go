package index

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/catalog"

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
// reader's per-child step) and recorded. When the index itself fails (its
// database refuses a read or a write: a full disk, say), the unindexed
// reader answers the whole call instead: a failing index never fails a
// listing the logs can answer.
func (d *DB) ListChildren(ctx context.Context, parentID string) ([]query.Entry, error) {
	if err := catalog.Checkpoint(ctx); err != nil {
		return nil, err
	}
	r, err := d.candidates(ctx, parentID)
	if errors.Is(err, errListing) || (err == nil && !r.ok) {
		return query.ListChildren(ctx, d.oracle, parentID)
	}
	if err != nil {
		return d.unindexed(ctx, parentID, err)
	}
	if r.cached != nil {
		return slices.Clone(r.cached), nil // copied outside the lock
	}
	entries, err := d.entries(ctx, parentID, r.children)
	if err == nil && r.cacheable {
		d.remember(r, parentID, entries)
	}
	return entries, err
}

// unindexed answers ListChildren with the unindexed reader after the
// index failed with cause; CANCELLED once ctx is done.
func (d *DB) unindexed(ctx context.Context, parentID string, cause error) ([]query.Entry, error) {
	if err := d.failure(ctx, cause); errors.Is(err, fault.Cancelled) {
		return nil, err
	}
	return query.ListChildren(ctx, d.oracle, parentID)
}

// failure maps an index failure: CANCELLED once ctx is done, else the
// error wrapped as SESSION_QUERY_INDEX_FAILED.
func (d *DB) failure(ctx context.Context, err error) error {
	if cpErr := catalog.Checkpoint(ctx); cpErr != nil {
		return cpErr
	}
	return fault.New(fault.QueryIndexFailed, "session index failed: "+err.Error(), err)
}

// candidate is one direct child in trace order, with its indexed outcome.
type candidate struct {
	record   catalog.Record
	fresh    bool // the outcome below was derived from the current log
	state    int
	label    string
	revision string
}

// children is what candidates found for one parent: its direct children,
// or a copy of a listing remembered while nothing it depends on changed.
type children struct {
	children []candidate
	cached   []query.Entry // the remembered listing itself: copy it before returning
	ok       bool          // false: the trace would fail; the unindexed reader answers

	// cacheable: every child and ancestor was watched and unchanged, every
	// child's outcome fresh and none live, so the entries may be remembered
	// for the view and generation below.
	cacheable  bool
	lineage    []string
	view       *view
	generation uint64
}

// candidates brings the view up to date and reads parentID's direct
// children from it (see view.directChildren). The handle's first use
// tries the checkpoint instead (coldChildren): a one-shot process then
// neither walks the store nor watches folders; later uses watch the
// folders they depend on. A log whose header changed
// under the view makes it reconcile fully once more; a second change hands
// the call to the unindexed reader (ok false).
func (d *DB) candidates(ctx context.Context, parentID string) (children, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.used {
		d.used = true
		if r, ok, err := d.coldChildren(ctx, parentID); err != nil || ok {
			return r, err
		}
	} else if d.watch == nil {
		d.watch = newWatcher()
		if d.view != nil {
			d.view.watch = d.watch
		}
	}
	if d.view != nil {
		overflow := d.watch.drain(func(id string) { d.view.changed(id, false) })
		if overflow {
			d.view.changed("", true)
		}
	}
	for range 2 {
		if err := d.current(ctx); err != nil {
			return children{}, err
		}
		r, headersHeld := d.view.directChildren(d.root, parentID, d.sessions.List())
		if headersHeld {
			return r, nil
		}
		d.view = nil
	}
	return children{}, nil
}

// remember keeps entries as parentID's listing while the view and its
// generation are those r was read at.
func (d *DB) remember(r children, parentID string, entries []query.Entry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.view == r.view && d.view.generation == r.generation {
		d.view.listed[parentID] = &listing{generation: r.generation, entries: slices.Clone(entries), lineage: r.lineage}
	}
}

// current keeps the view when the listing cannot have changed since it was
// taken, else reconciles the index fully and takes a new view. d.mu is held.
func (d *DB) current(ctx context.Context) error {
	if d.view != nil && d.view.unchanged(d.root) {
		return nil
	}
	d.view = nil
	obs, err := d.reconcileLocked(ctx, false)
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
// revision of its log, or the remembered listing when nothing it depends
// on changed. ok is false when the trace would fail (a source conflict,
// an unknown parent, a cycle): the caller then asks the unindexed reader,
// which reports that failure exactly. headersHeld is false when a log read
// on the way (the parent's lineage, a child) no longer starts with its
// indexed header.
func (v *view) directChildren(root, parentID string, live []*session.Live) (r children, headersHeld bool) {
	lives := map[string]session.Header{}
	for _, l := range live {
		h := l.Header()
		if s, found := v.sessions[h.ID]; found && catalog.CompatibleHeaders(h, s.header) != nil {
			return r, true
		}
		lives[h.ID] = h
	}
	if l := v.listed[parentID]; l != nil && l.generation == v.generation && !l.touchedBy(parentID, lives) {
		return children{cached: l.entries, ok: true}, true
	}
	t := now()
	r = children{view: v, generation: v.generation, cacheable: true}
	ok, held := v.hasAcyclicLineage(root, parentID, lives, t, &r)
	if !ok || !held {
		return children{}, held
	}
	stored := v.children[parentID]
	r.children = make([]candidate, 0, len(stored))
	for _, s := range stored {
		rev, held := v.revisionOf(root, s, t)
		if !held {
			return children{}, false
		}
		c := candidate{record: catalog.Record{Header: s.header, Persisted: true}, revision: rev,
			state: s.outcome.state, label: s.outcome.label}
		c.fresh = s.outcome.revision != "" && s.outcome.revision == rev && rev != racy
		if h, isLive := lives[s.header.ID]; isLive {
			c.record = catalog.Record{Header: h, Live: true, Persisted: true}
		}
		r.cacheable = r.cacheable && s.clean && c.fresh && !c.record.Live
		r.children = append(r.children, c)
	}
	for id, h := range lives {
		if h.ParentSession == parentID && !slices.ContainsFunc(r.children, func(c candidate) bool { return c.record.Header.ID == id }) {
			r.children = append(r.children, candidate{record: catalog.Record{Header: h, Live: true}})
			r.cacheable = false
		}
	}
	slices.SortFunc(r.children, func(a, b candidate) int { return catalog.SiblingOrder(a.record, b.record) })
	r.ok = true
	return r, true
}

// hasAcyclicLineage reports whether id is in the corpus and its ancestry
// never returns to a session already seen; held is false when a stored
// ancestor's log no longer starts with its indexed header.
func (v *view) hasAcyclicLineage(root, id string, lives map[string]session.Header, t time.Time, r *children) (ok, held bool) {
	if id == "" { // names no session, though top-level ones have "" for a parent
		return false, true
	}
	seen := map[string]bool{}
	for current := id; current != ""; {
		if seen[current] {
			return false, true
		}
		seen[current] = true
		r.lineage = append(r.lineage, current)
		h, found := lives[current]
		r.cacheable = r.cacheable && !found
		if !found {
			s, stored := v.sessions[current]
			if !stored {
				return current != id, true // an unresolved parent ends the ancestry
			}
			if _, held := v.revisionOf(root, s, t); !held {
				return false, false
			}
			r.cacheable = r.cacheable && s.clean
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
	if err := catalog.Checkpoint(ctx); err != nil {
		return nil, err
	}
	if len(derived) > 0 {
		d.record(ctx, derived)
	}
	return out, nil
}

func (d *DB) entry(ctx context.Context, parentID string, c *candidate) (*query.Entry, error) {
	if !c.fresh || c.record.Live {
		return query.InspectChild(ctx, d.oracle, parentID, c.record.Header, c.record.Live)
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
		d.view.generation++
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

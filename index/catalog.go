package index

import (
	"context"
	"database/sql"
	"errors"
	"github.com/dsh-actors/dsh-actors/fault"
	"slices"

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
// reconciliation; the live-first checks of the trace (every live header
// against its stored one, the parent's existence, its ancestry), any of
// whose failures hands the whole call to the unindexed reader; then the
// direct children in trace order, a live one read live, a stored one from
// its indexed outcome when that was derived from its current revision,
// else read (through the unindexed reader's per-child step) and recorded.
func (d *DB) ListChildren(ctx context.Context, parentID string) ([]query.Entry, error) {
	if err := query.ListingCheckpoint(ctx); err != nil {
		return nil, err
	}
	err := d.reconcile(ctx)
	if errors.Is(err, errListing) {
		return query.ListChildren(ctx, d.oracle, parentID)
	}
	if err != nil {
		return nil, d.failure(ctx, err)
	}
	children, ok, err := d.directChildren(ctx, parentID)
	if err != nil {
		return nil, d.failure(ctx, err)
	}
	if !ok {
		return query.ListChildren(ctx, d.oracle, parentID)
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

// directChildren is the trace's part ListChildren needs: the direct
// children of parentID in sibling order. ok is false when the trace would
// fail (a source conflict, an unknown parent, a cycle): the caller then
// asks the unindexed reader, which reports that failure exactly.
func (d *DB) directChildren(ctx context.Context, parentID string) ([]candidate, bool, error) {
	lives := map[string]session.Header{}
	for _, l := range d.sessions.List() {
		h := l.Header()
		stored, found, err := d.storedHeader(ctx, h.ID)
		if err != nil {
			return nil, false, err
		}
		if found && query.CompatibleHeaders(h, stored) != nil {
			return nil, false, nil
		}
		lives[h.ID] = h
	}
	if ok, err := d.hasAcyclicLineage(ctx, parentID, lives); !ok || err != nil {
		return nil, false, err
	}
	children, err := d.storedChildren(ctx, parentID)
	if err != nil {
		return nil, false, err
	}
	for i := range children {
		if h, live := lives[children[i].record.Header.ID]; live {
			children[i].record = query.Record{Header: h, Live: true, Persisted: true}
		}
	}
	for id, h := range lives {
		if h.ParentSession == parentID && !slices.ContainsFunc(children, func(c candidate) bool { return c.record.Header.ID == id }) {
			children = append(children, candidate{record: query.Record{Header: h, Live: true}})
		}
	}
	slices.SortFunc(children, func(a, b candidate) int { return query.SiblingOrder(a.record, b.record) })
	return children, true, nil
}

// hasAcyclicLineage reports whether id is in the corpus and its ancestry
// never returns to a session already seen.
func (d *DB) hasAcyclicLineage(ctx context.Context, id string, lives map[string]session.Header) (bool, error) {
	seen := map[string]bool{}
	for current := id; current != ""; {
		if seen[current] {
			return false, nil
		}
		seen[current] = true
		h, found := lives[current]
		if !found {
			var err error
			if h, found, err = d.storedHeader(ctx, current); err != nil {
				return false, err
			}
		}
		if !found {
			return current != id, nil // an unresolved parent ends the ancestry
		}
		current = h.ParentSession
	}
	return true, nil
}

func (d *DB) storedHeader(ctx context.Context, id string) (session.Header, bool, error) {
	h, err := scanHeader(d.sql.QueryRowContext(ctx, `SELECT `+headerColumns+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return session.Header{}, false, nil
	}
	return h, err == nil, err
}

func (d *DB) storedChildren(ctx context.Context, parentID string) ([]candidate, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT `+prefixed("s.", headerColumns)+`,
		s.child_state, s.label, coalesce(l.revision, ''), coalesce(s.child_revision = l.revision, 0)
		FROM sessions s LEFT JOIN logs l ON l.dir = s.dir
		WHERE s.parent_session = ? ORDER BY s.created_at, s.id`, parentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		var c candidate
		var state sql.NullInt64
		var label sql.NullString
		h, err := scanHeader(rows, &state, &label, &c.revision, &c.fresh)
		if err != nil {
			return nil, err
		}
		c.record = query.Record{Header: h, Persisted: true}
		c.state, c.label = int(state.Int64), label.String
		c.fresh = c.fresh && state.Valid && c.revision != racy
		out = append(out, c)
	}
	return out, rows.Err()
}

// entries reads the candidates in order, recording the outcomes it derived.
func (d *DB) entries(ctx context.Context, parentID string, children []candidate) ([]query.Entry, error) {
	out := []query.Entry{}
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

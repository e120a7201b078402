package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
)

// checkpoint is what a reconciliation leaves in the index for the next
// process: the folder stamps and entry fingerprints of its walk and the
// session folders that held no listed session, with their log revisions.
// A process that finds them unchanged knows the store's listing is the
// indexed one without walking every session folder (see view.unchanged).
type checkpoint struct {
	Root     string            `json:"root"`
	Names    []string          `json:"names"`
	Projects map[string]string `json:"projects"`
	Pieces   map[string]string `json:"pieces"`
	Pending  map[string]string `json:"pending"`
}

// writeCheckpoint records obs, just reconciled in tx, as the checkpoint.
// listed are the session folders indexed in tx, read from it when nil.
func writeCheckpoint(ctx context.Context, tx *sql.Tx, obs *observation, listed map[string]bool) error {
	if listed == nil {
		var err error
		if listed, err = listedDirs(ctx, tx); err != nil {
			return err
		}
	}
	c := checkpoint{Root: obs.root, Names: obs.names, Projects: obs.projects, Pieces: obs.pieces, Pending: map[string]string{}}
	for dir, rev := range obs.logs {
		if !listed[dir] {
			c.Pending[dir] = rev
		}
	}
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE state SET checkpoint = ?`, string(data))
	return err
}

func listedDirs(ctx context.Context, tx *sql.Tx) (map[string]bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT dir FROM sessions`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var dir string
		if err := rows.Scan(&dir); err != nil {
			return nil, err
		}
		out[dir] = true
	}
	return out, rows.Err()
}

// coldChildren answers a process's first listing without walking the
// store: when the checkpoint's folders are unchanged (one stat of the root
// and of each project folder, one of each pending folder's log) it reads
// from the index only the parent's lineage and its direct children, whose
// logs directChildren then stats. ok is false when the checkpoint is
// missing or stale, or live sessions exist: the caller then reconciles
// fully. d.mu is held.
func (d *DB) coldChildren(ctx context.Context, parentID string) (children, bool, error) {
	if len(d.sessions.List()) > 0 {
		return children{}, false, nil
	}
	v, stored, err := d.checkpointView(ctx)
	if err != nil || v == nil || !v.unchanged(d.root) {
		return children{}, false, err
	}
	d.restamp(ctx, v, stored)
	if err := d.loadLineage(ctx, v, parentID); err != nil {
		return children{}, false, err
	}
	if err := d.loadChildren(ctx, v, parentID); err != nil {
		return children{}, false, err
	}
	r, held := v.directChildren(d.root, parentID, nil)
	if !held {
		return children{}, false, nil
	}
	r.cacheable, r.view = false, nil
	return r, true, nil
}

// checkpointView is the view of the stored checkpoint, holding no session
// yet, and the checkpoint's text; nil when there is none.
func (d *DB) checkpointView(ctx context.Context) (*view, string, error) {
	var data string
	if err := d.sql.QueryRowContext(ctx, `SELECT checkpoint FROM state`).Scan(&data); err != nil {
		return nil, "", err
	}
	var c checkpoint
	if data == "" || json.Unmarshal([]byte(data), &c) != nil {
		return nil, "", nil
	}
	return &view{root: c.Root, names: c.Names, projects: c.Projects, pieces: c.Pieces, pending: c.Pending,
		sessions: map[string]*indexedSession{}, children: map[string][]*indexedSession{}, listed: map[string]*listing{}}, data, nil
}

// restamp stores the folder stamps view.unchanged settled (a folder
// modified just before the checkpoint was taken has a racy stamp, found
// unchanged later by reading its entries), unless another process wrote a
// checkpoint since. It is an optimization: a failure only means the next
// process reads those folders again.
func (d *DB) restamp(ctx context.Context, v *view, stored string) {
	data, err := json.Marshal(checkpoint{Root: v.root, Names: v.names, Projects: v.projects, Pieces: v.pieces, Pending: v.pending})
	if err != nil || string(data) == stored {
		return
	}
	_, _ = d.sql.ExecContext(ctx, `UPDATE state SET checkpoint = ? WHERE checkpoint = ?`, string(data), stored)
}

// sessionColumns select an indexed session with its derived outcome and
// the log revision its header was verified at.
const sessionColumns = `SELECT ` + headerColumns + `, s.dir, coalesce(child_revision, ''), coalesce(child_state, 0),
	coalesce(label, ''), coalesce(l.revision, '') FROM sessions s LEFT JOIN logs l ON l.dir = s.dir `

func scanSession(row scanner) (*indexedSession, error) {
	s := &indexedSession{}
	var err error
	s.header, err = scanHeader(row, &s.dir, &s.outcome.revision, &s.outcome.state, &s.outcome.label, &s.verified)
	return s, err
}

// loadLineage adds id and its stored ancestors to v, up to the first
// unknown one or the first seen twice.
func (d *DB) loadLineage(ctx context.Context, v *view, id string) error {
	for current := id; current != "" && v.sessions[current] == nil; {
		s, err := scanSession(d.sql.QueryRowContext(ctx, sessionColumns+`WHERE s.id = ?`, current))
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		v.sessions[current] = s
		current = s.header.ParentSession
	}
	return nil
}

// loadChildren adds parentID's indexed direct children to v, in sibling
// order (createdAt, then id in byte order).
func (d *DB) loadChildren(ctx context.Context, v *view, parentID string) error {
	rows, err := d.sql.QueryContext(ctx, sessionColumns+`WHERE s.parent_session = ? ORDER BY s.created_at, s.id`, parentID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return err
		}
		if old := v.sessions[s.header.ID]; old != nil {
			s = old // a child in its own parent's lineage: a cycle, which directChildren finds
		}
		v.sessions[s.header.ID] = s
		v.children[parentID] = append(v.children[parentID], s)
	}
	return rows.Err()
}

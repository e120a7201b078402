package index

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"time"

	"github.com/dsh-actors/dsh-actors/internal/catalog"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
)

// now is the clock of the walks and checks (a test moves it to make
// stamps racy or not).
var now = time.Now

// view is what one process knows of the store between uses, taken from
// its last full reconciliation: the stamps of the root and project
// folders, the session folders that hold no listed session (with their
// log revisions), and every listed session with the revision of its log
// whose first line is the indexed header.
//
// A session's header is its log's first line, written once by Create and
// never rewritten, so the listing can only change when a folder's entries
// change (a new or removed project or session folder, a flat log file:
// the folder's stamp moves) or when a folder without a listed session
// gets its log. A use therefore stats the root, the project folders and
// those few session folders, re-reads a folder only when its stamp moved
// or was racy, and reconciles fully only when its entries changed. The
// logs whose contents the answer depends on (the parent's lineage and its
// children) are stat'ed on every use and their headers re-checked when
// their revision moved.
type view struct {
	root     string            // stamp of the root folder
	names    []string          // project folders in directory order
	projects map[string]string // name → stamp
	pieces   map[string]string // name → fingerprint of its entries
	pending  map[string]string // session folder without a listed session → its log revision
	sessions map[string]*indexedSession
	children map[string][]*indexedSession // parent id → children in sibling order
	watch    *watcher                     // nil: every use stats what it depends on

	// generation moves whenever a session may have changed (a folder event
	// or an overflow) or an outcome was recorded; listed holds each asked
	// parent's listing remembered at a generation.
	generation uint64
	listed     map[string]*listing
}

// listing is one parent's remembered entries, valid while the view's
// generation is the one they were read at and no live session is the
// parent's child or in its lineage.
type listing struct {
	generation uint64
	entries    []query.Entry
	lineage    []string
}

// touchedBy reports whether a live session is a child of parentID or in
// its lineage (those are read live, never remembered).
func (l *listing) touchedBy(parentID string, lives map[string]session.Header) bool {
	for id, h := range lives {
		if h.ParentSession == parentID || slices.Contains(l.lineage, id) {
			return true
		}
	}
	return false
}

// indexedSession is one listed session as the view holds it.
type indexedSession struct {
	header   session.Header
	dir      string // session folder relative to the root
	verified string // a log revision whose first line is header
	outcome  outcome
	rev      string // its log's revision at the last stat
	clean    bool   // watched since that stat, and no change seen since
}

// outcome is a stored child's derived catalog outcome and the log
// revision it was derived from ("" when none was derived).
type outcome struct {
	revision string
	state    int
	label    string
}

// unchanged reports whether the listing of root is still the one the view
// was taken from: the root and every project folder have the stamps it
// recorded or, where a stamp moved or was racy, the same entries, and no
// session folder without a listed session has a new log revision. It
// updates the stamps of folders found unchanged.
func (v *view) unchanged(root string) bool {
	t := now()
	stamp := folderStamp(root, t)
	if stamp == racy || stamp != v.root {
		names, err := projectNames(root)
		if err != nil || !slices.Equal(names, v.names) {
			return false
		}
		v.root = stamp
	}
	for _, name := range v.names {
		stamp := folderStamp(filepath.Join(root, name), t)
		if stamp != racy && stamp == v.projects[name] {
			continue
		}
		piece, _, err := readProject(root, name)
		if err != nil || piece != v.pieces[name] {
			return false
		}
		v.projects[name] = stamp
	}
	for dir, rev := range v.pending {
		if rev == racy || logRevision(filepath.Join(root, dir), t) != rev {
			return false
		}
	}
	return true
}

// load builds the view of an observation just reconciled into the index.
func (d *DB) load(ctx context.Context, obs *observation) (*view, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT `+headerColumns+`, dir,
		coalesce(child_revision, ''), coalesce(child_state, 0), coalesce(label, '') FROM sessions`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	v := &view{root: obs.root, projects: obs.projects, pieces: obs.pieces, pending: map[string]string{},
		sessions: map[string]*indexedSession{}, children: map[string][]*indexedSession{},
		listed: map[string]*listing{}}
	for rows.Next() {
		s := &indexedSession{}
		if s.header, err = scanHeader(rows, &s.dir, &s.outcome.revision, &s.outcome.state, &s.outcome.label); err != nil {
			return nil, err
		}
		s.verified = obs.logs[s.dir]
		v.sessions[s.header.ID] = s
		v.children[s.header.ParentSession] = append(v.children[s.header.ParentSession], s)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, list := range v.children {
		slices.SortFunc(list, func(a, b *indexedSession) int {
			return catalog.SiblingOrder(catalog.Record{Header: a.header}, catalog.Record{Header: b.header})
		})
	}
	listed := map[string]bool{}
	for _, s := range v.sessions {
		listed[s.dir] = true
	}
	for dir, rev := range obs.logs {
		if !listed[dir] {
			v.pending[dir] = rev
		}
	}
	v.names, v.watch = obs.names, d.watch
	return v, nil
}

// revisionOf reports the current revision of a listed session's log and
// whether its first line is still the indexed header. A session watched
// since its last stat, with no change seen since, keeps that stat's
// revision; otherwise its folder is watched (before the stat, so no change
// falls between them), its log stat'ed, and its first line read when the
// revision moved since it was last verified.
func (v *view) revisionOf(root string, s *indexedSession, t time.Time) (string, bool) {
	if s.clean {
		return s.rev, true
	}
	dir := filepath.Join(root, s.dir)
	watched := v.watch.watch(dir, s.header.ID)
	rev := logRevision(dir, t)
	if rev == "" || rev == racy || rev != s.verified {
		want, err := s.header.MarshalJSON()
		if err != nil {
			return rev, false
		}
		line, err := firstLine(dir)
		if err != nil || !bytes.Equal(line, want) {
			return rev, false
		}
		if rev != racy {
			s.verified = rev
		}
	}
	s.rev, s.clean = rev, watched && rev != racy
	return rev, true
}

// changed forgets what the view knew of a session's log since its last
// stat (its folder changed); all of them on an overflow.
func (v *view) changed(id string, overflow bool) {
	v.generation++
	if overflow {
		for _, s := range v.sessions {
			s.clean = false
		}
		return
	}
	if s, ok := v.sessions[id]; ok {
		s.clean = false
	}
}

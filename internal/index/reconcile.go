package index

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
)

// errListing means the store's own listing failed (or the root could not
// be walked): the index cannot vouch for anything, and the caller hands
// the request to the unindexed reader, which reports the failure.
var errListing = errors.New("index: the store's listing failed")

// reconcile brings the index up to date with the store root. It walks the
// root, compares every log's revision with the indexed one and, when the
// folder structure or a log's first line changed, takes the store's
// listing again; then it writes, in one transaction, the new revisions,
// the new listing and the invalidation of what was derived from changed
// logs. A failing walk or listing is errListing and writes nothing. An
// index that holds no session yet is built in the same step, each log
// read once for its header and its facts (the caller derives the facts
// of every log next).
func (d *DB) reconcile(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, err := d.reconcileLocked(ctx, true)
	return err
}

// reconcileLocked is reconcile with d.mu held; it returns the walk it
// reconciled. build says whether an empty index is built with its facts
// (else only the listing is taken, reading each log's first line).
func (d *DB) reconcileLocked(ctx context.Context, build bool) (*observation, error) {
	obs, err := walk(ctx, d.root)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errListing
	}
	if afterWalk != nil {
		afterWalk(d)
	}
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	r := reconciler{d: d, tx: tx, obs: obs, build: build}
	if err := r.run(ctx); err != nil {
		return nil, err
	}
	if err := writeCheckpoint(ctx, tx, obs, r.builtDirs()); err != nil {
		return nil, err
	}
	return obs, tx.Commit()
}

// builtDirs are the session folders of the listing when this
// reconciliation built the index from nothing, as far as the checkpoint
// needs them: a walked folder holds a listed session exactly when the
// build derived it. nil when it did not build.
func (r *reconciler) builtDirs() map[string]bool { return r.derived }

// afterWalk, when set, is called by reconcileLocked between its walk and
// its write transaction (a test interleaves another handle there).
var afterWalk func(*DB)

type reconciler struct {
	d   *DB
	tx  *sql.Tx
	obs *observation
	// build: an index holding no session is built with its facts.
	build bool
	// derived are the session folders whose facts relist derived, in this
	// transaction, from the log revision observed (a build from nothing).
	derived map[string]bool
	// projects are the project folders (relative to the root) of the cwds
	// seen so far.
	projects map[string]string
}

func (r *reconciler) run(ctx context.Context) error {
	var structure string
	if err := r.tx.QueryRowContext(ctx, `SELECT structure FROM state`).Scan(&structure); err != nil {
		return err
	}
	stored, err := r.storedRevisions(ctx)
	if err != nil {
		return err
	}
	r.restatChanged(stored)
	changed := changedDirs(stored, r.obs.logs)
	if structure == r.obs.structure && len(changed) == 0 {
		return nil
	}
	relist := structure != r.obs.structure
	if !relist {
		if relist, err = r.firstLinesChanged(ctx, changed); err != nil {
			return err
		}
	}
	if relist {
		if err := r.relist(ctx); err != nil {
			return err
		}
	}
	if err := r.writeRevisions(ctx, changed); err != nil {
		return err
	}
	_, err = r.tx.ExecContext(ctx, `UPDATE state SET structure = ?`, r.obs.structure)
	return err
}

func (r *reconciler) storedRevisions(ctx context.Context) (map[string]string, error) {
	rows, err := r.tx.QueryContext(ctx, `SELECT dir, revision FROM logs`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var dir, rev string
		if err := rows.Scan(&dir, &rev); err != nil {
			return nil, err
		}
		out[dir] = rev
	}
	return out, rows.Err()
}

// restatChanged stats again, inside the write transaction, every log
// whose walked revision differs from a stored one, or is racy. The walk
// ran before the transaction began, so another process may have recorded
// a newer revision since; writing the walked one would take the index back
// to an older version of the log. A log with no stored revision has none
// to go back from (a build from nothing stats each log once).
func (r *reconciler) restatChanged(stored map[string]string) {
	start := now()
	for dir, rev := range r.obs.logs {
		if old, ok := stored[dir]; (ok && old != rev) || rev == racy {
			r.obs.logs[dir] = logRevision(filepath.Join(r.d.root, dir), start)
		}
	}
}

// changedDirs lists the session folders that are new, gone, or whose log
// revision differs (a racy revision always differs).
func changedDirs(stored, observed map[string]string) []string {
	var out []string
	for dir, rev := range observed {
		if old, ok := stored[dir]; !ok || old != rev || rev == racy {
			out = append(out, dir)
		}
	}
	for dir := range stored {
		if _, ok := observed[dir]; !ok {
			out = append(out, dir)
		}
	}
	return out
}

// firstLinesChanged reports whether any changed log's first line is not
// the header the index holds for its folder (or the folder has none): the
// listing would then differ. Appends leave the first line alone.
func (r *reconciler) firstLinesChanged(ctx context.Context, dirs []string) (bool, error) {
	for _, dir := range dirs {
		h, ok, err := r.headerOfDir(ctx, dir)
		if err != nil {
			return false, err
		}
		_, exists := r.obs.logs[dir]
		if !ok || !exists {
			return true, nil
		}
		want, err := h.MarshalJSON()
		if err != nil {
			return false, err
		}
		line, err := firstLine(filepath.Join(r.d.root, dir))
		if err != nil || !bytes.Equal(line, want) {
			return true, nil
		}
	}
	return false, nil
}

// firstLine returns the first line of the log in the session folder dir
// (session.jsonl, else the first frame's line of session.jsonl.zstd)
// without its LF. A Zstandard line is not checked against its frame's
// checksum: callers only compare it with a header they hold.
func firstLine(dir string) ([]byte, error) {
	f, err := os.Open(filepath.Join(dir, logpath.FileName))
	var r io.Reader = f
	if errors.Is(err, fs.ErrNotExist) {
		if f, err = os.Open(filepath.Join(dir, logpath.FileName+".zstd")); err == nil {
			dec, derr := zstd.NewReader(f, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
			if derr != nil {
				_ = f.Close()
				return nil, derr
			}
			defer dec.Close()
			r = dec
		}
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(r, 4096).ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(line, []byte("\n")), nil
}

func (r *reconciler) headerOfDir(ctx context.Context, dir string) (session.Header, bool, error) {
	row := r.tx.QueryRowContext(ctx, `SELECT `+headerColumns+` FROM sessions WHERE dir = ?`, dir)
	h, err := scanHeader(row)
	if errors.Is(err, sql.ErrNoRows) {
		return session.Header{}, false, nil
	}
	return h, err == nil, err
}

// relist replaces the indexed listing with the store's: sessions no longer
// listed are deleted with everything derived from them, new ones are
// inserted, and a session whose header changed is replaced.
func (r *reconciler) relist(ctx context.Context) error {
	indexed, err := r.indexedHeaders(ctx)
	if err != nil {
		return err
	}
	if lister, ok := r.d.sessions.Store().(session.LogLister); ok && r.build && len(indexed) == 0 {
		return r.buildFrom(ctx, lister)
	}
	headers, err := r.d.sessions.Store().List(ctx)
	if err != nil {
		return listingFailure(ctx)
	}
	listed := map[string]session.Header{}
	for _, h := range headers {
		listed[h.ID] = h
	}
	for id, h := range indexed {
		if l, ok := listed[id]; !ok || !sameHeader(l, h) {
			if err := r.deleteSession(ctx, id); err != nil {
				return err
			}
		}
	}
	insert, err := r.tx.PrepareContext(ctx, `INSERT INTO sessions(id, dir, version, created_at, cwd, parent_session,
		seed_length, origin, delegation_depth, agent_preset) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer insert.Close()
	for id, h := range listed {
		if old, ok := indexed[id]; ok && sameHeader(old, h) {
			continue
		}
		if err := r.insertSession(ctx, insert, h); err != nil {
			return err
		}
	}
	return nil
}

// listingFailure is ctx's error once it is done, else errListing.
func listingFailure(ctx context.Context) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errListing
}

// buildFrom fills an index that holds no session from the store's listing,
// reading each log once: every listed session is inserted in one row with
// its facts (title, last seq, documents) and, for a child, its catalog
// outcome, derived from the log just read under the revision the walk
// observed (stat before read: a log appended since differs from it and is
// derived again on the next use), and that revision is recorded with it.
// Rows are numbered from 1 in listing order (the table is empty). The
// secondary indexes of sessions are dropped first and created again over
// the loaded rows, in the same transaction: one sort each instead of a
// b-tree insert per row in listing order.
func (r *reconciler) buildFrom(ctx context.Context, lister session.LogLister) error {
	for _, stmt := range []string{`DROP INDEX sessions_by_parent`, `DROP INDEX sessions_by_dir`} {
		if _, err := r.tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	b := builder{r: r}
	defer b.close()
	if err := b.prepare(ctx); err != nil {
		return err
	}
	r.derived = map[string]bool{}
	var row int64
	var failed error // the index's own failure, not the listing's
	err := lister.ListLogs(ctx, func(h session.Header, log *session.Log, readErr error) error {
		row++
		failed = b.session(ctx, row, h, log, readErr)
		return failed
	})
	if failed != nil {
		return failed
	}
	if err != nil {
		return listingFailure(ctx)
	}
	for _, stmt := range sessionIndexes {
		if _, err := r.tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// builder holds the statements of one build from nothing, prepared once.
type builder struct {
	r                  *reconciler
	insert, docs, logs *sql.Stmt
}

func (b *builder) prepare(ctx context.Context) error {
	var err error
	if b.insert, err = b.r.tx.PrepareContext(ctx, insertBuiltSession); err != nil {
		return err
	}
	if b.docs, err = b.r.tx.PrepareContext(ctx, insertDoc); err != nil {
		return err
	}
	b.logs, err = b.r.tx.PrepareContext(ctx, `INSERT INTO logs(dir, revision) VALUES (?, ?)`)
	return err
}

func (b *builder) close() {
	for _, stmt := range []*sql.Stmt{b.insert, b.docs, b.logs} {
		if stmt != nil {
			_ = stmt.Close()
		}
	}
}

// insertBuiltSession inserts one session row of a build with everything
// derived from its log.
const insertBuiltSession = `INSERT INTO sessions(rowid, id, dir, version, created_at, cwd, parent_session, seed_length,
	origin, delegation_depth, agent_preset, child_revision, child_state, label, facts_revision, title, last_seq,
	last_turn_end) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// session inserts h as row, with the facts of log (or of its read
// failure), its log's revision and, when h is a child, its catalog
// outcome.
func (b *builder) session(ctx context.Context, row int64, h session.Header, log *session.Log, readErr error) error {
	r := b.r
	dir, err := r.sessionDir(h)
	if err != nil {
		return err
	}
	var facts logFacts
	var child builtOutcome
	if rev, observed := r.obs.logs[dir]; observed { // else derived on the next use
		r.derived[dir] = true
		if _, err := b.logs.ExecContext(ctx, dir, rev); err != nil {
			return err
		}
		if facts, err = insertDocs(ctx, b.docs, factsOf{id: h.ID, revision: rev, firstDoc: row << docRowBits, log: log, err: readErr}); err != nil {
			return err
		}
		child = outcomeOfLog(ctx, rev, h, log, readErr)
	}
	_, err = b.insert.ExecContext(ctx, row, h.ID, dir, h.Version, h.CreatedAt, h.Cwd, h.ParentSession, seedColumn(h.SeedLength),
		h.Origin, h.DelegationDepth, h.AgentPreset, child.revision, child.state, child.label,
		facts.recorded, facts.title, facts.lastSeq, facts.turnEnd)
	return err
}

// builtOutcome is the catalog outcome columns of a built row (all NULL:
// none derived).
type builtOutcome struct {
	revision sql.NullString
	state    sql.NullInt64
	label    sql.NullString
}

// outcomeOfLog is the catalog outcome of h, a child, from its log read at
// rev, as ListChildren would record it; none for a session without a
// parent, an unreadable log, a racy revision or an unstable outcome.
func outcomeOfLog(ctx context.Context, rev string, h session.Header, log *session.Log, readErr error) builtOutcome {
	if h.ParentSession == "" || readErr != nil || rev == "" || rev == racy {
		return builtOutcome{}
	}
	entry, err := query.InspectChildLog(ctx, h, log)
	var c candidate
	if err != nil || !stateOf(entry, &c) {
		return builtOutcome{}
	}
	return builtOutcome{revision: sql.NullString{String: rev, Valid: true}, state: sql.NullInt64{Int64: int64(c.state), Valid: true},
		label: sql.NullString{String: c.label, Valid: true}}
}

func (r *reconciler) indexedHeaders(ctx context.Context) (map[string]session.Header, error) {
	rows, err := r.tx.QueryContext(ctx, `SELECT `+headerColumns+` FROM sessions`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]session.Header{}
	for rows.Next() {
		h, err := scanHeader(rows)
		if err != nil {
			return nil, err
		}
		out[h.ID] = h
	}
	return out, rows.Err()
}

func (r *reconciler) deleteSession(ctx context.Context, id string) error {
	if err := deleteDocs(ctx, r.tx, id); err != nil {
		return err
	}
	_, err := r.tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
	return err
}

// insertSession indexes h with insert, the prepared INSERT of relist.
func (r *reconciler) insertSession(ctx context.Context, insert *sql.Stmt, h session.Header) error {
	dir, err := r.sessionDir(h)
	if err != nil {
		return err
	}
	_, err = insert.ExecContext(ctx, h.ID, dir, h.Version, h.CreatedAt, h.Cwd, h.ParentSession, seedColumn(h.SeedLength), h.Origin,
		h.DelegationDepth, h.AgentPreset)
	return err
}

// sessionDir is h's session folder relative to the root: its project
// folder (computed once per cwd) joined with its id's segment, as
// logpath.Path names it.
func (r *reconciler) sessionDir(h session.Header) (string, error) {
	project, ok := r.projects[h.Cwd]
	if !ok {
		abs, err := logpath.ProjectDir(r.d.root, h.Cwd)
		if err != nil {
			return "", err
		}
		if project, err = filepath.Rel(r.d.root, abs); err != nil {
			return "", err
		}
		if r.projects == nil {
			r.projects = map[string]string{}
		}
		r.projects[h.Cwd] = project
	}
	seg, err := logpath.EncodeSegment(h.ID)
	if err != nil {
		return "", errors.Join(errors.New("header id cannot name a storage path"), err)
	}
	return filepath.Join(project, seg), nil
}

// writeRevisions records the observed revisions of the changed folders
// and drops the search documents of their sessions, marking their facts
// underived so that the next use derives them again (derived outcomes are
// checked against the revision when they are read). Each statement is
// prepared once for all folders.
func (r *reconciler) writeRevisions(ctx context.Context, dirs []string) error {
	upsert, err := r.tx.PrepareContext(ctx, `INSERT INTO logs(dir, revision) VALUES (?, ?)
		ON CONFLICT(dir) DO UPDATE SET revision = excluded.revision`)
	if err != nil {
		return err
	}
	defer upsert.Close()
	underive, err := r.tx.PrepareContext(ctx, `UPDATE sessions SET facts_revision = NULL WHERE dir = ?`)
	if err != nil {
		return err
	}
	defer underive.Close()
	for _, dir := range dirs {
		if r.derived[dir] {
			continue // recorded by the build with its facts, derived at this revision
		}
		if rev, ok := r.obs.logs[dir]; ok {
			_, err = upsert.ExecContext(ctx, dir, rev)
		} else {
			_, err = r.tx.ExecContext(ctx, `DELETE FROM logs WHERE dir = ?`, dir)
		}
		if err != nil {
			return err
		}
		if err := r.deleteDocsOfDir(ctx, dir); err != nil {
			return err
		}
		if _, err := underive.ExecContext(ctx, dir); err != nil {
			return err
		}
	}
	return nil
}

// deleteDocsOfDir drops the search documents of the sessions indexed in
// the session folder dir (only a session with a last seq has any).
func (r *reconciler) deleteDocsOfDir(ctx context.Context, dir string) error {
	rows, err := r.tx.QueryContext(ctx, `SELECT id FROM sessions WHERE dir = ? AND last_seq IS NOT NULL`, dir)
	if err != nil {
		return err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			_ = rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	for _, id := range ids {
		if err := deleteDocs(ctx, r.tx, id); err != nil {
			return err
		}
	}
	return nil
}

// docRowBits is how many low bits of a document's rowid hold its event's
// seq; the high bits are its session's rowid in sessions (docRows).
const docRowBits = 32

// docRows is the rowid range of the search documents of session id: its
// row's rowid shifted past docRowBits, so that a session's documents are
// dropped by one range delete instead of a scan of every document. ok is
// false when id is not indexed.
func docRows(ctx context.Context, tx *sql.Tx, id string) (first, last int64, ok bool, err error) {
	var row int64
	err = tx.QueryRowContext(ctx, `SELECT rowid FROM sessions WHERE id = ?`, id).Scan(&row)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, err
	}
	first = row << docRowBits
	return first, first | (1<<docRowBits - 1), true, nil
}

// deleteDocs drops the search documents of session id.
func deleteDocs(ctx context.Context, tx *sql.Tx, id string) error {
	first, last, ok, err := docRows(ctx, tx, id)
	if err != nil || !ok {
		return err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM docs WHERE rowid BETWEEN ? AND ?`, first, last)
	return err
}

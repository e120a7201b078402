package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"modernc.org/sqlite"
)

// FileName is the index file inside the store root.
const FileName = "session-query.db"

// applicationID marks the file as this package's index ("DSHA"); the
// original harness's search index uses another id.
const applicationID = 0x44534841

// schemaVersion is PRAGMA user_version of the schema below and of the
// text searchText extracts (3: a turn's end, a failed tool's error and
// todos as the original indexes them; 4: the checkpoint a new process
// checks freshness against; 5: the end of a session's last turn; 6: a
// document's rowid names its session's row, docRows). An index of an older
// version is rebuilt; one of a newer version is refused.
const schemaVersion = 6

var schema = []string{
	`CREATE TABLE state(singleton INTEGER PRIMARY KEY CHECK (singleton = 1), structure TEXT NOT NULL,
		checkpoint TEXT NOT NULL) STRICT`,
	`INSERT INTO state VALUES (1, '', '')`,
	// logs: every session folder the walk saw, with its log's revision.
	`CREATE TABLE logs(dir TEXT PRIMARY KEY, revision TEXT NOT NULL) STRICT`,
	// sessions: every session the store lists, with what is derived from it.
	`CREATE TABLE sessions(
		id TEXT PRIMARY KEY, dir TEXT NOT NULL, version INTEGER NOT NULL, created_at INTEGER NOT NULL,
		cwd TEXT NOT NULL, parent_session TEXT NOT NULL, seed_length INTEGER, origin TEXT NOT NULL,
		delegation_depth INTEGER NOT NULL, agent_preset TEXT NOT NULL,
		child_revision TEXT, child_state INTEGER, label TEXT,
		facts_revision TEXT, title TEXT, last_seq INTEGER, last_turn_end TEXT) STRICT`,
	sessionIndexes[0],
	sessionIndexes[1],
	// docs: the search documents. No column sizes are kept (columnsize=0):
	// search ranks by highlight() and the length column, never by bm25,
	// and a build writes one b-tree row less per document.
	`CREATE VIRTUAL TABLE docs USING fts5(text, session_id UNINDEXED, seq UNINDEXED, type UNINDEXED,
		time UNINDEXED, length UNINDEXED, tokenize = 'unicode61', columnsize = 0)`,
}

// sessionIndexes are the secondary indexes of sessions; a build from
// nothing creates them after its rows (buildFrom).
var sessionIndexes = [...]string{
	`CREATE INDEX sessions_by_parent ON sessions(parent_session, created_at, id)`,
	`CREATE INDEX sessions_by_dir ON sessions(dir)`,
}

// knownTables are the tables of this schema, FTS5's shadow tables included.
var knownTables = map[string]bool{
	"state": true, "logs": true, "sessions": true, "docs": true, "docs_data": true,
	"docs_idx": true, "docs_content": true, "docs_docsize": true, "docs_config": true,
}

// refused is fault.IndexRefused: an index file this package will not use
// or replace (another application's SQLite file, or an index of a newer
// schema); the message names the file and says what to do.
func refused(path, reason string) error {
	return fault.New(fault.IndexRefused,
		fmt.Sprintf("index: refusing %q: %s (move it away, or read without the index: --no-index)", path, reason), nil)
}

// DB is the derived index of one store root, over the live registry whose
// store it indexes. Its methods are safe for concurrent use; reconciliation
// is serialized in the process.
type DB struct {
	path     string
	root     string
	sessions *session.Sessions
	oracle   *query.Query

	mu    sync.Mutex // serializes reconciliation, derivation writes and the view
	sql   *sql.DB
	view  *view    // this process's view of the store since its last full reconciliation; nil: none
	watch *watcher // nil before the second listing, or when inotify is unavailable
	used  bool     // a listing was made through this handle
}

// Open opens (creating, or rebuilding when it is corrupt or of an older
// schema) the index of the store rooted at root, whose sessions are
// sessions (sessions.Store() must be the store over root). It reconciles
// nothing yet: every use does. The store root is created if missing.
func Open(ctx context.Context, root string, sessions *session.Sessions) (*DB, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	d := &DB{path: filepath.Join(abs, FileName), root: abs, sessions: sessions, oracle: query.New(sessions)}
	if err := d.open(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// Path returns the index file's path.
func (d *DB) Path() string { return d.path }

// Close closes the database. It is idempotent.
func (d *DB) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sql == nil {
		return nil
	}
	err := d.sql.Close()
	d.sql = nil
	d.watch.close()
	d.watch, d.view = nil, nil
	return err
}

// open opens the file, rebuilding it once when it is corrupt.
func (d *DB) open(ctx context.Context) error {
	err := d.openOnce(ctx)
	if isCorrupt(err) {
		if err = d.remove(); err == nil {
			err = d.openOnce(ctx)
		}
	}
	if err != nil {
		if errors.Is(err, fault.IndexRefused) {
			return err
		}
		return fmt.Errorf("index: opening %q: %w", d.path, err)
	}
	return nil
}

func (d *DB) openOnce(ctx context.Context) error {
	if f, err := os.OpenFile(d.path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
		_ = f.Close()
	}
	dsn := "file:" + d.path + "?_pragma=busy_timeout(30000)&_pragma=synchronous(normal)&_pragma=mmap_size(268435456)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return err
	}
	if err := d.prepare(ctx, db); err != nil {
		_ = db.Close()
		return err
	}
	// Only a validated file is switched to the WAL journal (a refused one
	// is left byte for byte as it was).
	if err := switchToWAL(ctx, db); err != nil {
		_ = db.Close()
		return err
	}
	d.sql = db
	return nil
}

// walSwitchPatience bounds how long switchToWAL retries a busy file, as
// the connection's busy timeout bounds every other statement.
const walSwitchPatience = 30 * time.Second

// switchToWAL sets db's journal to WAL. When another connection holds the
// file's RESERVED lock (another process validating a new index), SQLite
// answers the switch SQLITE_BUSY at once instead of waiting out the busy
// timeout, so the switch is retried, backing off from 1 ms to 100 ms,
// until it succeeds, ctx ends or walSwitchPatience has passed.
func switchToWAL(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(walSwitchPatience)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		_, err := db.ExecContext(ctx, `PRAGMA journal_mode = wal`)
		if !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY.
func isBusy(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == 5
}

// prepare validates the file and creates (or resets) the schema, in one
// immediate transaction so that two processes opening one new file agree.
func (d *DB) prepare(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	var appID, version int64
	if err := tx.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&appID); err != nil {
		return err
	}
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return err
	}
	tables, err := userTables(ctx, tx)
	if err != nil {
		return err
	}
	switch {
	case appID == applicationID && version == schemaVersion:
		for _, t := range tables {
			if !knownTables[t] {
				return refused(d.path, fmt.Sprintf("it holds a table %q this index does not know", t))
			}
		}
		return tx.Commit()
	case appID == applicationID && version > schemaVersion:
		return refused(d.path, fmt.Sprintf("it is an index of schema %d, newer than this build's %d", version, schemaVersion))
	case appID == applicationID:
		if err := dropAll(ctx, tx, tables); err != nil {
			return err
		}
	case appID != 0:
		return refused(d.path, fmt.Sprintf("it is another application's SQLite file (application_id %#x)", appID))
	case len(tables) > 0:
		return refused(d.path, "it is a SQLite file with tables but no application id, not an empty or recognized index")
	}
	for _, stmt := range append(schema,
		fmt.Sprintf(`PRAGMA application_id = %d`, applicationID),
		fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func userTables(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, rows.Err()
}

// dropAll removes an older schema: the FTS table first (it drops its
// shadow tables), then the rest.
func dropAll(ctx context.Context, tx *sql.Tx, tables []string) error {
	if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS docs`); err != nil {
		return err
	}
	for _, t := range tables {
		if strings.HasPrefix(t, "docs") {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS "`+strings.ReplaceAll(t, `"`, `""`)+`"`); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes a corrupt index file and its journal sidecars.
func (d *DB) remove() error {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if err := os.Remove(d.path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("index: removing corrupt %q: %w", d.path+suffix, err)
		}
	}
	return nil
}

// isCorrupt reports SQLite's "not a database" and "malformed" failures.
func isCorrupt(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	code := e.Code() & 0xff
	return code == 11 || code == 26 // SQLITE_CORRUPT, SQLITE_NOTADB
}

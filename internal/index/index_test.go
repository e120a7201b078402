package index

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/storegen"
	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// inspectCounter counts the store's full-log reads and, apart, List's
// first-line reads.
type inspectCounter struct {
	session.Store
	mu         sync.Mutex
	inspects   int
	firstLines int // first lines read by List
}

func (c *inspectCounter) Inspect(ctx context.Context, id string) (*session.Log, error) {
	c.mu.Lock()
	c.inspects++
	c.mu.Unlock()
	return c.Store.Inspect(ctx, id)
}

// List counts, for each header it returns, the read of a first line.
func (c *inspectCounter) List(ctx context.Context) ([]session.Header, error) {
	headers, err := c.Store.List(ctx)
	c.mu.Lock()
	c.firstLines += len(headers)
	c.mu.Unlock()
	return headers, err
}

func (c *inspectCounter) firstLineReads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.firstLines
}

// ListLogs counts each log it reads as one full read.
func (c *inspectCounter) ListLogs(ctx context.Context, fn func(session.Header, *session.Log, error) error) error {
	return c.Store.(session.LogLister).ListLogs(ctx, func(h session.Header, log *session.Log, err error) error {
		c.mu.Lock()
		c.inspects++
		c.mu.Unlock()
		return fn(h, log, err)
	})
}

func (c *inspectCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inspects
}

type fixture struct {
	t        testing.TB
	root     string
	store    *inspectCounter
	sessions *session.Sessions
}

// newFixture generates a store of 40 sessions, 8 of them children of
// storegen.Parent, with every log's and folder's mtime an hour old (past
// the racy window, so revisions and folder stamps are trusted).
func newFixture(t *testing.T) *fixture {
	return newFixtureTB(t, storegen.Shape{Sessions: 40, Children: 8, Turns: 1})
}

func newFixtureTB(t testing.TB, shape storegen.Shape) *fixture {
	root := t.TempDir()
	_, err := storegen.Generate(root, shape)
	require.NoError(t, err)
	age(t, root)
	jsonl, err := session.OpenJSONL(root)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, jsonl.Close()) })
	store := &inspectCounter{Store: jsonl}
	return &fixture{t: t, root: root, store: store, sessions: session.NewSessions(store)}
}

// age sets every log's and folder's mtime an hour back.
func age(t testing.TB, root string) {
	old := time.Now().Add(-time.Hour)
	var dirs []string
	require.NoError(t, filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err == nil && filepath.Base(path) == logpath.FileName {
			err = os.Chtimes(path, old, old)
		}
		if err == nil && info.IsDir() {
			dirs = append(dirs, path)
		}
		return err
	}))
	for _, dir := range dirs {
		require.NoError(t, os.Chtimes(dir, old, old))
	}
}

func (f *fixture) open() *DB {
	f.t.Helper()
	db, err := Open(context.Background(), f.root, f.sessions)
	require.NoError(f.t, err)
	f.t.Cleanup(func() { require.NoError(f.t, db.Close()) })
	return db
}

// requireSame lists parent through db and the unindexed reader and
// requires the same answer.
func (f *fixture) requireSame(db *DB, parent string) []query.Entry {
	f.t.Helper()
	want, wantErr := query.ListChildren(context.Background(), query.New(f.sessions), parent)
	got, err := db.ListChildren(context.Background(), parent)
	require.Equal(f.t, want, got)
	if wantErr != nil {
		require.EqualError(f.t, err, wantErr.Error())
	} else {
		require.NoError(f.t, err)
	}
	return got
}

func (f *fixture) childLog(i int) string {
	path, err := logpath.Path(f.root, "/work/alpha", storegen.ChildID(i))
	require.NoError(f.t, err)
	if _, err := os.Stat(path); err != nil {
		matches, _ := filepath.Glob(filepath.Join(f.root, "*", storegen.ChildID(i), logpath.FileName))
		require.Len(f.t, matches, 1)
		path = matches[0]
	}
	return path
}

func TestAWarmListingReadsNoLog(t *testing.T) {
	f := newFixture(t)
	db := f.open()
	require.Len(t, f.requireSame(db, storegen.Parent), 8)
	before := f.store.count()
	_, err := db.ListChildren(context.Background(), storegen.Parent)
	require.NoError(t, err)
	require.Equal(t, before, f.store.count(), "an unchanged store is answered from the index")

	reopened := f.open()
	_, err = reopened.ListChildren(context.Background(), storegen.Parent)
	require.NoError(t, err)
	require.Equal(t, before, f.store.count(), "an unchanged reopen reads no log either")
}

// TestABuildReadsEachLogOnce: titles and search of a new index read
// each of the store's 40 logs once, and answer as the unindexed reader;
// a listing before them reads only the children it lists.
func TestABuildReadsEachLogOnce(t *testing.T) {
	f := newFixture(t)
	_, err := f.open().Titles(context.Background())
	require.NoError(t, err)
	require.Equal(t, 40, f.store.count(), "full reads of a build")
	require.Zero(t, f.store.firstLineReads(), "a build reads no first line apart")

	g := newFixture(t)
	db := g.open()
	_, err = db.ListChildren(context.Background(), storegen.Parent)
	require.NoError(t, err)
	require.Equal(t, 8, g.store.count(), "a listing reads each of its 8 children once, and no other log")
	g.requireSame(db, storegen.Parent)
	g.requireSameSearch(db)
}

// TestAListingAfterABuildReadsNoLog: a build derives every child's catalog
// outcome from the one read of its log (a healthy child, duplicate
// descriptors, a future version, no descriptor at all), so the listing
// that follows reads no log and answers as the unindexed reader.
func TestAListingAfterABuildReadsNoLog(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	descriptor := func(seq int64, payload string) session.Event {
		return session.Event{Type: "subagent/descriptor", Seq: seq, Time: 1, Data: json.RawMessage(payload)}
	}
	child := func(id string, createdAt int64, events ...session.Event) session.Log {
		start := session.Event{Type: "turn/start", Seq: 0, Time: 1, Data: json.RawMessage(`{"turn":1}`)}
		return session.Log{Header: session.Header{ID: id, CreatedAt: createdAt, Cwd: "/work", ParentSession: "p", Origin: "subagent",
			DelegationDepth: 1}, Events: append([]session.Event{start}, events...)}
	}
	require.NoError(t, storetest.WriteSynthetic(root,
		session.Log{Header: session.Header{ID: "p", CreatedAt: 1, Cwd: "/work"}},
		child("healthy", 2, descriptor(1, `{"version":1,"provider":"spawn","label":"fine"}`)),
		child("twice", 3, descriptor(1, `{"version":1,"provider":"spawn","label":"a"}`), descriptor(2, `{"version":1,"provider":"spawn","label":"b"}`)),
		child("future", 4, descriptor(1, `{"version":2,"provider":"spawn","label":"x"}`)),
		child("none", 5)))
	age(t, root)
	jsonl, err := session.OpenJSONL(root)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, jsonl.Close()) })
	f := &fixture{t: t, root: root, store: &inspectCounter{Store: jsonl}}
	f.sessions = session.NewSessions(f.store)
	db := f.open()
	_, err = db.Titles(ctx)
	require.NoError(t, err)
	require.Equal(t, 5, f.store.count(), "the build reads each log once")
	got, err := db.ListChildren(ctx, "p")
	require.NoError(t, err)
	require.Equal(t, 5, f.store.count(), "the listing after the build reads no log")
	require.Equal(t, []query.Entry{
		{Kind: query.KindChild, ID: "healthy", Label: "fine", Status: query.StatusComplete},
		{Kind: query.KindDiagnostic, ID: "twice", Reason: query.ReasonCorrupt},
		{Kind: query.KindDiagnostic, ID: "future", Reason: query.ReasonUnsupported},
	}, got)
	f.requireSame(db, "p")
	f.requireSame(f.open(), "p")
}

func TestReconcilesLogsChangedBehindItsBack(t *testing.T) {
	f := newFixture(t)
	db := f.open()
	f.requireSame(db, storegen.Parent)

	// A child's log rewritten in place with another label and its mtime
	// set back: the ctime still moves.
	path := f.childLog(3)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	stat, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(replaceOnce(string(data), "child task 3", "child task X")), 0o600))
	require.NoError(t, os.Chtimes(path, stat.ModTime(), stat.ModTime()))
	entries := f.requireSame(db, storegen.Parent)
	require.Contains(t, entries, query.Entry{Kind: query.KindChild, ID: storegen.ChildID(3), Label: "child task X", Status: query.StatusComplete})

	// A torn tail appended: listed from the valid prefix.
	appendTo(t, f.childLog(4), `{"type":"turn/start","seq":99,"ti`)
	f.requireSame(db, storegen.Parent)

	// A child removed, then a damaged one: the index follows.
	require.NoError(t, os.RemoveAll(filepath.Dir(f.childLog(5))))
	require.Len(t, f.requireSame(db, storegen.Parent), 7)
	appendTo(t, f.childLog(6), "{garbage\n")
	f.requireSame(db, storegen.Parent)

	// A log whose header now names another parent leaves the listing.
	h0 := f.childLog(0)
	data, err = os.ReadFile(h0)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(h0, []byte(replaceOnce(string(data), `"parentSession":"parent"`, `"parentSession":"other!"`)), 0o600))
	require.Len(t, f.requireSame(db, storegen.Parent), 6)

	// A store whose listing fails fails the whole call, as unindexed.
	require.NoError(t, os.WriteFile(filepath.Join(f.root, filepath.Base(filepath.Dir(filepath.Dir(h0))), "flat.jsonl"), []byte("{}\n"), 0o600))
	_, err = db.ListChildren(context.Background(), storegen.Parent)
	require.ErrorIs(t, err, fault.QueryPersistenceFailed)
	f.requireSame(db, storegen.Parent)
}

func replaceOnce(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	panic("not found: " + old)
}

func appendTo(t *testing.T, path, text string) {
	file, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = file.WriteString(text)
	require.NoError(t, err)
	require.NoError(t, file.Close())
}

func TestUnknownParentsAndLiveChildrenAnswerAsUnindexed(t *testing.T) {
	f := newFixture(t)
	db := f.open()
	f.requireSame(db, "no-such-parent")
	live, err := f.sessions.Resume(context.Background(), storegen.ChildID(2))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, f.sessions.Release(context.Background(), live)) })
	entries := f.requireSame(db, storegen.Parent)
	require.Equal(t, query.StatusRunning, entries[2].Status)
}

// sqliteFile writes a SQLite file at path with the given statements.
func sqliteFile(t *testing.T, path string, stmts ...string) {
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	for _, s := range stmts {
		_, err := db.Exec(s)
		require.NoError(t, err)
	}
}

func TestRebuildsOrRefusesADamagedIndex(t *testing.T) {
	rebuilt := map[string]func(t *testing.T, path string){
		"deleted":   func(t *testing.T, path string) { require.NoError(t, os.Remove(path)) },
		"truncated": func(t *testing.T, path string) { require.NoError(t, os.Truncate(path, 0)) },
		"cut short": func(t *testing.T, path string) {
			info, err := os.Stat(path)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(path, info.Size()/2))
		},
		"garbage": func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, []byte("this is not a database, not at all, not even close........"), 0o600))
		},
		"an older schema": func(t *testing.T, path string) {
			sqliteFile(t, path, `PRAGMA user_version = 0`)
		},
	}
	for name, damage := range rebuilt {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			db := f.open()
			f.requireSame(db, storegen.Parent)
			require.NoError(t, db.Close())
			for _, suffix := range []string{"-wal", "-shm"} {
				_ = os.Remove(db.Path() + suffix)
			}
			damage(t, db.Path())
			f.requireSame(f.open(), storegen.Parent)
		})
	}
	refused := map[string][]string{
		"another application's file": {`PRAGMA application_id = 1234`, `CREATE TABLE t(x)`},
		"tables without an id":       {`CREATE TABLE t(x)`},
		"a newer schema":             {`PRAGMA application_id = 1146308673`, fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion+1)},
	}
	for name, stmts := range refused {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			path := filepath.Join(f.root, FileName)
			sqliteFile(t, path, stmts...)
			before := fileDigest(t, path)
			_, err := Open(context.Background(), f.root, f.sessions)
			require.ErrorIs(t, err, fault.IndexRefused)
			require.Contains(t, err.Error(), path)
			require.Equal(t, before, fileDigest(t, path), "a refused file is left alone")
		})
	}
}

func fileDigest(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return fmt.Sprintf("%x", sha256.Sum256(data))
}

// TestAColdHandleChecksFreshnessWithoutWalkingTheStore: a handle opened on
// an index another handle brought up to date (a new process, say) answers
// from it after checking only the folders and the logs the answer depends
// on; it walks the store again only once a folder's entries changed.
func TestAColdHandleChecksFreshnessWithoutWalkingTheStore(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	warm := f.open()
	want := f.requireSame(warm, storegen.Parent)
	require.NoError(t, warm.Close())
	walks := 0
	afterWalk = func(*DB) { walks++ }
	t.Cleanup(func() { afterWalk = nil })

	inspects := f.store.count()
	got, err := f.open().ListChildren(ctx, storegen.Parent)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Zero(t, walks, "an unchanged store is not walked")
	require.Equal(t, inspects, f.store.count(), "an unchanged store reads no log")

	// A child's log changed in place: the cold handle reads that log only.
	appendTo(t, f.childLog(2), `{"type":"subagent/descriptor","seq":12,"time":1,"data":{"version":1,"provider":"spawn","label":"again"}}`+"\n")
	got = f.requireSame(f.open(), storegen.Parent)
	require.Contains(t, got, query.Entry{Kind: query.KindDiagnostic, ID: storegen.ChildID(2), Reason: query.ReasonCorrupt})
	require.Zero(t, walks)

	// A child removed: its project folder's entries changed, so the store
	// is walked again.
	require.NoError(t, os.RemoveAll(filepath.Dir(f.childLog(5))))
	require.Len(t, f.requireSame(f.open(), storegen.Parent), 7)
	require.Equal(t, 1, walks)
}

package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/jsjson"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/storegen"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
)

// searchPhrases are searched by requireSameSearch: words of every
// generated log, of the tool calls, and none.
var searchPhrases = []string{"dolor sit amet", "README", "no such words"}

// requireSameSearch requires db's search pages and titles to be the
// unindexed reader's: ScanSearch over the store, and the title rule over
// every listed log read with Inspect.
func (f *fixture) requireSameSearch(db *DB) {
	f.t.Helper()
	ctx := context.Background()
	for _, phrase := range searchPhrases {
		for _, req := range []SearchRequest{{Phrase: phrase, Limit: MaxLimit}, {Phrase: phrase, Limit: 3, Offset: 5}} {
			want, wantErr := ScanSearch(ctx, f.store, req)
			got, err := db.Search(ctx, req)
			require.Equal(f.t, want, got, "%+v", req)
			if wantErr != nil {
				require.EqualError(f.t, err, wantErr.Error())
			} else {
				require.NoError(f.t, err)
			}
		}
	}
	want, wantErr := unindexedTitles(ctx, f.store)
	got, err := db.Titles(ctx)
	if wantErr != nil {
		require.Error(f.t, err)
		return
	}
	require.NoError(f.t, err)
	require.Equal(f.t, want, got)
}

// unindexedTitles is the title rule applied to every readable listed log.
func unindexedTitles(ctx context.Context, store session.Store) (map[string]Title, error) {
	headers, err := store.List(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]Title{}
	for _, h := range headers {
		log, err := store.Inspect(ctx, h.ID)
		if err != nil {
			continue
		}
		title := Title{AsOfSeq: -1}
		for _, e := range log.Events {
			title.AsOfSeq = e.Seq
			if text, ok := TitleOf(e); ok && title.Text == "" {
				title.Text = text
			}
			switch e.Type {
			case vocab.TypeTurnStart:
				title.LastTurnEnd = nil
			case vocab.TypeTurnEnd:
				title.LastTurnEnd = e.Data
			}
		}
		out[h.ID] = title
	}
	return out, nil
}

// TestSearchFollowsLogsChangedBehindItsBack: search and titles answer as
// the unindexed reader after each change another writer makes to the
// store without the index's knowledge.
func TestSearchFollowsLogsChangedBehindItsBack(t *testing.T) {
	f := newFixture(t)
	db := f.open()
	f.requireSameSearch(db)

	path := f.childLog(3)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	stat, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(string(data), "README", "CHANGED")), 0o600))
	require.NoError(t, os.Chtimes(path, stat.ModTime(), stat.ModTime()))
	f.requireSameSearch(db)

	appendTo(t, f.childLog(4), `{"type":"user/message","seq":99,"ti`)
	f.requireSameSearch(db)
	require.NoError(t, os.RemoveAll(filepath.Dir(f.childLog(5))))
	f.requireSameSearch(db)
	appendTo(t, f.childLog(6), "{garbage\n")
	f.requireSameSearch(db)
	before, err := db.Search(context.Background(), SearchRequest{Phrase: "README", Limit: MaxLimit})
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(filepath.Dir(f.childLog(7))))
	after, err := db.Search(context.Background(), SearchRequest{Phrase: "README", Limit: MaxLimit})
	require.NoError(t, err)
	require.Less(t, len(after.Hits), len(before.Hits), "a removed log's hits are gone")
	for _, hit := range after.Hits {
		require.NotEqual(t, storegen.ChildID(7), hit.SessionID)
	}
}

// TestADamagedIndexSearchesAlike: search and titles from an index that was
// deleted, emptied, cut short, overwritten or of an older schema (all
// rebuilt) answer as before the damage.
func TestADamagedIndexSearchesAlike(t *testing.T) {
	for name, damage := range map[string]func(path string) error{
		"deleted":   os.Remove,
		"truncated": func(path string) error { return os.Truncate(path, 0) },
		"cut short": func(path string) error {
			info, err := os.Stat(path)
			if err != nil {
				return err
			}
			return os.Truncate(path, info.Size()/3)
		},
		"garbage": func(path string) error { return os.WriteFile(path, []byte(strings.Repeat("not sqlite ", 100)), 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			db := f.open()
			want, err := db.Search(context.Background(), SearchRequest{Phrase: "dolor", Limit: MaxLimit})
			require.NoError(t, err)
			require.NoError(t, db.Close())
			for _, suffix := range []string{"-wal", "-shm"} {
				_ = os.Remove(db.Path() + suffix)
			}
			require.NoError(t, damage(db.Path()))
			rebuilt := f.open()
			got, err := rebuilt.Search(context.Background(), SearchRequest{Phrase: "dolor", Limit: MaxLimit})
			require.NoError(t, err)
			require.Equal(t, want, got)
			f.requireSameSearch(rebuilt)
		})
	}
}

// TestTheIndexAnswersAlikeOverAZstdStore: over a store of Zstandard logs
// the index lists, searches and titles as the unindexed reader, also while
// a child's final frame is torn at every byte offset.
func TestTheIndexAnswersAlikeOverAZstdStore(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writer, err := session.OpenJSONL(root, session.WithCompression(session.CompressionZstd))
	require.NoError(t, err)
	require.NoError(t, writer.Create(ctx, session.Header{ID: "parent", CreatedAt: 1, Cwd: "/w"}, []session.Event{userText(0, "plan the zebra trip")}))
	for i, label := range []string{"first zebra", "second"} {
		d, err := descriptor.Snapshot(descriptor.Data{Provider: "spawn", Label: label})
		require.NoError(t, err)
		data, err := jsjson.Marshal(d)
		require.NoError(t, err)
		id := fmt.Sprintf("child-%d", i)
		require.NoError(t, writer.Create(ctx, session.Header{ID: id, CreatedAt: int64(2 + i), Cwd: "/w", ParentSession: "parent",
			Origin: "subagent", DelegationDepth: 1}, []session.Event{{Type: vocab.TypeSubagentDescriptor, Seq: 0, Time: 5, Data: data}}))
		require.NoError(t, writer.Append(ctx, id, []session.Event{userText(1, "look for a zebra, "+label)}))
	}
	require.NoError(t, writer.Close())
	path, err := logpath.Path(root, "/w", "child-1")
	require.NoError(t, err)
	path += ".zstd"
	whole, err := os.ReadFile(path)
	require.NoError(t, err)

	store, err := session.OpenJSONL(root)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	c, err := store.Compression()
	require.NoError(t, err)
	require.Equal(t, session.CompressionZstd, c, "the store detects the root's encoding")
	f := &fixture{t: t, root: root, store: &inspectCounter{Store: store}}
	f.sessions = session.NewSessions(f.store)
	db := f.open()
	check := func(what string) {
		t.Helper()
		f.requireSame(db, "parent")
		for _, phrase := range []string{"zebra", "ZEBRA second", "look for"} {
			want, err := ScanSearch(ctx, f.store, SearchRequest{Phrase: phrase})
			require.NoError(t, err)
			got, err := db.Search(ctx, SearchRequest{Phrase: phrase})
			require.NoError(t, err)
			require.Equal(t, want, got, "%s: %q", what, phrase)
		}
	}
	check("whole")
	f.requireSameSearch(db)
	page, err := db.Search(ctx, SearchRequest{Phrase: "zebra second"})
	require.NoError(t, err)
	require.Equal(t, []Hit{{SessionID: "child-1", Seq: 1, Type: vocab.TypeUserMessage, Snippet: "look for a zebra, second"}}, page.Hits)
	frames := zstdFrameStarts(whole)
	require.Len(t, frames, 3, "header frame, seed frame, the appended batch")
	for cut := frames[2] + 1; cut < len(whole); cut++ {
		require.NoError(t, os.WriteFile(path, whole[:cut], 0o600))
		check(fmt.Sprintf("cut %d", cut))
	}
	require.NoError(t, os.WriteFile(path, whole, 0o600))
	check("restored")
	f.requireSameSearch(db)
}

// zstdFrameStarts finds the byte offsets of the Zstandard frame magics in
// a log the store wrote (every frame starts with 28 B5 2F FD).
func zstdFrameStarts(file []byte) []int {
	var out []int
	for i := 0; i+4 <= len(file); i++ {
		if file[i] == 0x28 && file[i+1] == 0xB5 && file[i+2] == 0x2F && file[i+3] == 0xFD {
			out = append(out, i)
		}
	}
	return out
}

// peerEnv names the store root a re-executed test binary works on as the
// second process.
const peerEnv = "DSH_INDEX_TEST_PEER_ROOT"

// peerRounds is how many listings and searches each process makes.
const peerRounds = 15

// runPeer is the second process: it opens the store and its index and
// lists and searches peerRounds times; its exit status says whether every
// call succeeded.
func runPeer(root string) int {
	ctx := context.Background()
	store, err := session.OpenJSONL(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer store.Close()
	db, err := Open(ctx, root, session.NewSessions(store))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	for range peerRounds {
		if err := useIndex(ctx, db); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

func useIndex(ctx context.Context, db *DB) error {
	_, listErr := db.ListChildren(ctx, storegen.Parent)
	_, searchErr := db.Search(ctx, SearchRequest{Phrase: "dolor sit", Limit: MaxLimit})
	_, titlesErr := db.Titles(ctx)
	return errors.Join(listErr, searchErr, titlesErr)
}

// TestTwoProcessesOnOneStoreKeepItConsistent: two other processes (this
// test binary re-executed) and two handles in this one use one store's
// index at once, while its logs keep changing revision: every call
// succeeds, the file passes SQLite's integrity check, and the answers are
// the unindexed reader's.
func TestTwoProcessesOnOneStoreKeepItConsistent(t *testing.T) {
	f := newFixture(t)
	var peers []*exec.Cmd
	outputs := make([]*strings.Builder, 2)
	for i := range outputs {
		outputs[i] = &strings.Builder{}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), peerEnv+"="+f.root)
		cmd.Stdout, cmd.Stderr = outputs[i], outputs[i]
		require.NoError(t, cmd.Start())
		peers = append(peers, cmd)
	}
	a, b := f.open(), f.open()
	var wg sync.WaitGroup
	errs := make(chan error, 2*peerRounds)
	for _, db := range []*DB{a, b} {
		wg.Go(func() {
			for range peerRounds {
				errs <- useIndex(context.Background(), db)
			}
		})
	}
	for i := range peerRounds {
		// New revisions (ctime moves) make every process write again.
		old := time.Now().Add(-time.Duration(i+2) * time.Hour)
		require.NoError(t, os.Chtimes(f.childLog(i%8), old, old))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for i, cmd := range peers {
		require.NoError(t, cmd.Wait(), "peer %d: %s", i, outputs[i])
	}
	requireIntact(t, a.Path())
	f.requireSame(b, storegen.Parent)
	f.requireSameSearch(a)
	f.requireSameSearch(f.open())
}

// TestAnOlderWalkLosesNoSearchDocuments: handle a walks the store; before
// a's write transaction begins, a log changes and handle b (another
// process, as far as the file is concerned) reconciles and derives it; then
// a writes what it walked. b's next search must still find that log's
// events, and so must a's.
func TestAnOlderWalkLosesNoSearchDocuments(t *testing.T) {
	f := newFixture(t)
	a, b := f.open(), f.open()
	f.requireSameSearch(b)
	var once sync.Once
	afterWalk = func(d *DB) {
		if d != a {
			return
		}
		once.Do(func() {
			old := time.Now().Add(-3 * time.Hour)
			require.NoError(t, os.Chtimes(f.childLog(0), old, old))
			f.requireSameSearch(b)
		})
	}
	t.Cleanup(func() { afterWalk = nil })
	_, err := a.ListChildren(context.Background(), storegen.Parent)
	require.NoError(t, err)
	f.requireSameSearch(b)
	f.requireSameSearch(a)
	f.requireSame(a, storegen.Parent)
}

// TestADerivationOfARemovedSessionWritesNothing: handle a reads a changed
// log to derive its documents; before a's write transaction begins, the
// session is removed from the store and handle b drops it from the index.
// a must not write documents of a session no longer indexed (nothing would
// ever drop them).
func TestADerivationOfARemovedSessionWritesNothing(t *testing.T) {
	f := newFixture(t)
	a, b := f.open(), f.open()
	f.requireSameSearch(b)
	old := time.Now().Add(-3 * time.Hour)
	require.NoError(t, os.Chtimes(f.childLog(0), old, old))
	var once sync.Once
	afterInspect = func(d *DB) {
		if d != a {
			return
		}
		once.Do(func() {
			require.NoError(t, os.RemoveAll(filepath.Dir(f.childLog(0))))
			f.requireSameSearch(b)
		})
	}
	t.Cleanup(func() { afterInspect = nil })
	_, err := a.Search(context.Background(), SearchRequest{Phrase: "dolor sit amet"})
	require.NoError(t, err)
	f.requireSameSearch(b)
	f.requireSameSearch(a)
}

// requireIntact checks the index file through a connection of its own:
// SQLite's integrity check and FTS5's, which compares the full-text index
// with the documents it holds. (A connection that used the FTS5 table
// before another process's commit can answer PRAGMA integrity_check from
// its cached, outdated FTS5 structure and report blobs that the other
// process's merge removed, while a fresh connection finds the file sound.)
func requireIntact(t *testing.T, path string) {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)")
	require.NoError(t, err)
	defer func() { require.NoError(t, conn.Close()) }()
	var check string
	require.NoError(t, conn.QueryRow(`PRAGMA integrity_check`).Scan(&check))
	require.Equal(t, "ok", check)
	_, err = conn.Exec(`INSERT INTO docs(docs) VALUES ('integrity-check')`)
	require.NoError(t, err, "FTS5 integrity-check")
}

// A file another process is about to write (it holds the RESERVED lock,
// as the other of two processes opening one new index does while it
// validates the file) does not fail Open's switch to the WAL journal:
// SQLite answers that switch busy at once, without its busy timeout, to
// avoid a deadlock, so the switch is retried until the writer is done.
func TestTheWALSwitchWaitsForAWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	writer, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	defer writer.Close()
	writer.SetMaxOpenConns(1)
	_, err = writer.Exec(`CREATE TABLE t (x)`)
	require.NoError(t, err)
	tx, err := writer.Begin()
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO t VALUES (1)`) // RESERVED until the commit
	require.NoError(t, err)

	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)")
	require.NoError(t, err)
	defer db.Close()
	switched := make(chan error, 1)
	go func() { switched <- switchToWAL(context.Background(), db) }()
	select {
	case err := <-switched:
		t.Fatalf("the switch returned while the writer held the file: %v", err)
	case <-time.After(300 * time.Millisecond): // long enough for a BUSY answer to come back
	}
	require.NoError(t, tx.Commit())
	require.NoError(t, <-switched)
	var mode string
	require.NoError(t, db.QueryRow(`PRAGMA journal_mode`).Scan(&mode))
	require.Equal(t, "wal", mode)
}

// TestADamagedZstdHeaderFrameIsThatChildsDiagnostic: one child whose
// header frame fails validation (one flipped checksum bit) is a diagnostic
// in its parent's listing, indexed or not, and every other listing of the
// store is unaffected; a header frame that cannot be decoded at all is
// skipped, as an unreadable first line of a JSONL log is.
func TestADamagedZstdHeaderFrameIsThatChildsDiagnostic(t *testing.T) {
	ctx := context.Background()
	for _, damage := range []struct {
		name string
		at   func(frame []byte) int // the byte of the header frame to flip
		want []query.Entry
	}{
		{"checksum", func(frame []byte) int { return len(frame) - 1 }, []query.Entry{
			{Kind: query.KindChild, ID: "child-0", Label: "first", Status: query.StatusComplete},
			{Kind: query.KindDiagnostic, ID: "child-1", Reason: "unavailable"},
		}},
		{"frame header", func([]byte) int { return 4 }, []query.Entry{
			{Kind: query.KindChild, ID: "child-0", Label: "first", Status: query.StatusComplete},
		}},
	} {
		t.Run(damage.name, func(t *testing.T) {
			root := t.TempDir()
			writer, err := session.OpenJSONL(root, session.WithCompression(session.CompressionZstd))
			require.NoError(t, err)
			for _, parent := range []string{"parent", "other"} {
				require.NoError(t, writer.Create(ctx, session.Header{ID: parent, CreatedAt: 1, Cwd: "/w"}, []session.Event{userText(0, "plan")}))
			}
			for i, child := range []struct{ id, parent, label string }{
				{"child-0", "parent", "first"}, {"child-1", "parent", "second"}, {"child-2", "other", "third"},
			} {
				d, err := descriptor.Snapshot(descriptor.Data{Provider: "spawn", Label: child.label})
				require.NoError(t, err)
				data, err := jsjson.Marshal(d)
				require.NoError(t, err)
				require.NoError(t, writer.Create(ctx, session.Header{ID: child.id, CreatedAt: int64(2 + i), Cwd: "/w", ParentSession: child.parent,
					Origin: "subagent", DelegationDepth: 1}, []session.Event{{Type: vocab.TypeSubagentDescriptor, Seq: 0, Time: 5, Data: data}}))
			}
			require.NoError(t, writer.Close())
			path, err := logpath.Path(root, "/w", "child-1")
			require.NoError(t, err)
			path += ".zstd"
			file, err := os.ReadFile(path)
			require.NoError(t, err)
			file[damage.at(file[:zstdFrameStarts(file)[1]])] ^= 0x01
			require.NoError(t, os.WriteFile(path, file, 0o600))

			store, err := session.OpenJSONL(root)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, store.Close()) })
			f := &fixture{t: t, root: root, store: &inspectCounter{Store: store}}
			f.sessions = session.NewSessions(f.store)
			db := f.open()
			require.Equal(t, damage.want, f.requireSame(db, "parent"))
			require.Equal(t, []query.Entry{{Kind: query.KindChild, ID: "child-2", Label: "third", Status: query.StatusComplete}},
				f.requireSame(db, "other"))
		})
	}
}

// TestAFailingIndexListsFromTheLogs: when the index's database fails (a
// full disk refuses its writes, say), a listing is answered by the
// unindexed reader alike instead of failing: the index failing is not
// the store failing.
func TestAFailingIndexListsFromTheLogs(t *testing.T) {
	f := newFixture(t)
	db := f.open()
	f.requireSame(db, storegen.Parent)
	broken, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "broken.db"))
	require.NoError(t, err)
	require.NoError(t, broken.Close())
	db.mu.Lock()
	working := db.sql
	db.sql = broken // every statement now fails
	db.view = nil   // and the next use must reconcile
	db.mu.Unlock()
	t.Cleanup(func() { db.mu.Lock(); db.sql = working; db.mu.Unlock() })

	require.Len(t, f.requireSame(db, storegen.Parent), 8)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = db.ListChildren(ctx, storegen.Parent)
	require.ErrorIs(t, err, fault.Cancelled, "a cancellation still wins")
}

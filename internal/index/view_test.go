package index

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/storegen"
	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
)

// writeChild writes a continuable child of storegen.Parent with a label,
// in the parent's project folder, and returns its log's path.
func (f *fixture) writeChild(id, label string, createdAt int64) string {
	f.t.Helper()
	data, err := json.Marshal(map[string]any{"version": 1, "provider": "spawn", "label": label})
	require.NoError(f.t, err)
	h := session.Header{ID: id, ParentSession: storegen.Parent, CreatedAt: createdAt, Cwd: "/work/alpha",
		Origin: "subagent", DelegationDepth: 1}
	require.NoError(f.t, storetest.WriteSynthetic(f.root, session.Log{Header: h,
		Events: []session.Event{{Type: vocab.TypeSubagentDescriptor, Seq: 0, Time: createdAt, Data: data}}}))
	path, err := logpath.Path(f.root, h.Cwd, id)
	require.NoError(f.t, err)
	return path
}

// TestAWarmViewFollowsTheStore: with folder watches (inotify) and without
// (a stat of every log the answer depends on).
func TestAWarmViewFollowsTheStore(t *testing.T) {
	for _, watched := range []bool{true, false} {
		t.Run(map[bool]string{true: "watched", false: "stat"}[watched], func(t *testing.T) {
			f := newFixture(t)
			db := f.open()
			if !watched {
				db.watch.close()
				db.watch = nil
			}
			followsTheStore(t, f, db)
		})
	}
}

func followsTheStore(t *testing.T, f *fixture, db *DB) {
	// Each listing twice: the second may be the remembered one.
	list := func() []query.Entry {
		f.requireSame(db, storegen.Parent)
		return f.requireSame(db, storegen.Parent)
	}
	require.Len(t, list(), 8)

	// A new child appears.
	added := f.writeChild("new-child", "a new child", 1_783_000_000_500)
	require.Len(t, list(), 9)

	// It is replaced behind the index (a new file renamed over it) with
	// another label, then appended to, then torn.
	data, err := os.ReadFile(added)
	require.NoError(t, err)
	tmp := filepath.Join(t.TempDir(), "log")
	require.NoError(t, os.WriteFile(tmp, []byte(replaceOnce(string(data), "a new child", "relabelled")), 0o600))
	require.NoError(t, os.Rename(tmp, added))
	require.Contains(t, list(),
		query.Entry{Kind: query.KindChild, ID: "new-child", Label: "relabelled", Status: query.StatusComplete})
	appendTo(t, added, `{"type":"turn/start","seq":1,"time":1783000000600}`+"\n")
	list()
	appendTo(t, added, `{"type":"turn/end","seq":2,"ti`)
	list()

	// Its log is removed but its folder stays; then the folder goes too.
	require.NoError(t, os.Rename(added, tmp))
	require.Len(t, list(), 8)
	// The log comes back into the folder (no folder entry list changed
	// but the session folder's): the folder without a listed session is
	// watched.
	require.NoError(t, os.Rename(tmp, added))
	require.Len(t, list(), 9)
	require.NoError(t, os.RemoveAll(filepath.Dir(added)))
	require.Len(t, list(), 8)

	// A session that is not a child is removed: the parent's listing is
	// unchanged, and a parent whose log is gone is unknown.
	require.NoError(t, os.Remove(f.childLog(7)))
	require.Len(t, list(), 7)
	parentLog, err := logpath.Path(f.root, "/work/alpha", storegen.Parent)
	require.NoError(t, err)
	require.NoError(t, os.Remove(parentLog))
	_, err = db.ListChildren(t.Context(), storegen.Parent)
	require.Error(t, err)
	list()
}

// coarseInfo is a folder's stat on a file system whose timestamps tick
// once a second and that keeps no inode change time.
type coarseInfo struct{ fs.FileInfo }

func (c coarseInfo) ModTime() time.Time { return c.FileInfo.ModTime().Truncate(time.Second) }
func (c coarseInfo) Sys() any           { return nil }

// TestACreateInTheSameTimestampTickIsSeen: a project folder whose stamp
// was racy when it was read is read again on the next use, so a session
// created within the same timestamp tick (its folder's stamp unchanged)
// is listed; once the stamp is old, a later create moves it.
func TestACreateInTheSameTimestampTickIsSeen(t *testing.T) {
	f := newFixture(t)
	tick := time.Now().Add(-time.Hour).Truncate(time.Second)
	project := filepath.Dir(filepath.Dir(f.childLog(0)))
	require.NoError(t, os.Chtimes(project, tick, tick))
	clock := tick.Add(300 * time.Millisecond)
	setClockAndStat(t, func() time.Time { return clock })
	db := f.open()
	require.Len(t, f.requireSame(db, storegen.Parent), 8)

	// Created in the same tick: the folder's coarse stamp does not move.
	f.writeChild("same-tick", "same tick", 1_783_000_000_501)
	require.NoError(t, os.Chtimes(project, tick.Add(500*time.Millisecond), tick.Add(500*time.Millisecond)))
	clock = tick.Add(900 * time.Millisecond)
	require.Len(t, f.requireSame(db, storegen.Parent), 9, "the racy folder is read again")

	// Long after the tick: the stamp is trusted from now on, and the next
	// create (a later tick) moves it.
	clock = tick.Add(10 * time.Second)
	require.Len(t, f.requireSame(db, storegen.Parent), 9)
	f.writeChild("later-tick", "later tick", 1_783_000_000_502)
	require.NoError(t, os.Chtimes(project, tick.Add(10*time.Second), tick.Add(10*time.Second)))
	clock = tick.Add(11 * time.Second)
	require.Len(t, f.requireSame(db, storegen.Parent), 10)
}

func setClockAndStat(t *testing.T, clock func() time.Time) {
	oldNow, oldStat := now, lstatFolder
	now = clock
	lstatFolder = func(path string) (fs.FileInfo, error) {
		info, err := os.Lstat(path)
		if err != nil {
			return nil, err
		}
		return coarseInfo{info}, nil
	}
	t.Cleanup(func() { now, lstatFolder = oldNow, oldStat })
}

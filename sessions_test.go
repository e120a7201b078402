package dsh

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/index"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
)

// sessionOf is id's entry among sessions; it fails the test when none.
func sessionOf(t *testing.T, sessions []Session, id string) Session {
	t.Helper()
	for _, s := range sessions {
		if s.Header.ID == id {
			return s
		}
	}
	require.Failf(t, "no session", "%q is not listed", id)
	return Session{}
}

// A live session is listed as running while its turn runs, with the time
// of its last event and how its last turn ended; stored, on a Zstandard
// JSONL folder, with or without the index, it keeps that last turn and is
// dated by its log file.
func TestSessionsTellRunningUpdatedAtAndLastTurn(t *testing.T) {
	dir := t.TempDir()
	rt := open(t, Options{Dir: dir})
	require.NoError(t, rt.OpenSession(bg, SessionSpec{ID: "s", Cwd: t.TempDir()}))
	_, err := rt.PromptSession(bg, "s", event.Text("sleep 1m"), user)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return sessionOf(t, rt.LiveSessions(), "s").Running }, time.Minute, time.Millisecond,
		"waiting for s to be listed as running")
	require.NoError(t, rt.CancelTurn(bg, "s", false))
	idle(t, rt, "s")
	_, err = rt.PromptSession(bg, "s", event.Text("fail boom"), user)
	require.NoError(t, err)
	idle(t, rt, "s")

	live := sessionOf(t, rt.LiveSessions(), "s")
	h, err := rt.History(bg, "s")
	require.NoError(t, err)
	last := h.Events[len(h.Events)-1]
	require.False(t, live.Running)
	require.Equal(t, time.UnixMilli(last.Time), live.UpdatedAt)
	require.Equal(t, "turn/end", last.Type)
	require.JSONEq(t, string(last.Data), string(live.LastTurnEnd))
	require.Contains(t, string(live.LastTurnEnd), `"boom"`)
	require.NoError(t, rt.Close())

	path, err := logpath.Path(dir, h.Header.Cwd, "s")
	require.NoError(t, err)
	info, err := os.Stat(path + ".zstd")
	require.NoError(t, err, "a new store's logs are Zstandard")
	for _, noIndex := range []bool{false, true} {
		stored := sessionOf(t, sessions(t, Options{Dir: dir, NoIndex: noIndex}), "s")
		require.False(t, stored.Live || stored.Running, "noIndex=%v", noIndex)
		require.Equal(t, info.ModTime(), stored.UpdatedAt, "noIndex=%v: the log file's mtime", noIndex)
		require.JSONEq(t, string(last.Data), string(stored.LastTurnEnd), "noIndex=%v", noIndex)
	}
}

// sessions lists the sessions of a runtime opened with opts, then closes it.
func sessions(t *testing.T, opts Options) []Session {
	t.Helper()
	rt, err := Open(opts)
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.Close()) }()
	list, err := rt.Sessions(bg)
	require.NoError(t, err)
	return list
}

// failingIndex fails every search with err, as SQLite fails on a full
// disk.
type failingIndex struct{ err error }

func (f failingIndex) Search(context.Context, index.SearchRequest) (index.Page, error) {
	return index.Page{}, f.err
}

// An index that fails a search never fails it: the logs answer, and the
// failure is logged at Warn naming its cause; the index's refusal of the
// request itself stands.
func TestSearchReadsTheLogsWhenTheIndexFails(t *testing.T) {
	dir := t.TempDir()
	first, err := Open(Options{Dir: dir})
	require.NoError(t, err)
	require.NoError(t, first.OpenSession(bg, SessionSpec{ID: "zebra", Cwd: t.TempDir()}))
	_, err = first.PromptSession(bg, "zebra", event.Text("reply the zebra crossed"), user)
	require.NoError(t, err)
	idle(t, first, "zebra")
	require.NoError(t, first.Close())
	var log bytes.Buffer
	rt := open(t, Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))})

	full := errors.New("index: database or disk is full (5)")
	page, err := rt.searchIndexOrLogs(bg, failingIndex{full}, index.SearchRequest{Phrase: "zebra"})
	require.NoError(t, err)
	require.NotEmpty(t, page.Hits, "the logs answered")
	for _, h := range page.Hits {
		require.Equal(t, "zebra", h.SessionID)
	}
	require.Contains(t, log.String(), "level=WARN")
	require.Contains(t, log.String(), "database or disk is full")

	refused := fault.New(fault.QueryInvalidLimit, "limit out of range", nil)
	_, err = rt.searchIndexOrLogs(bg, failingIndex{refused}, index.SearchRequest{Phrase: "zebra"})
	require.ErrorIs(t, err, fault.QueryInvalidLimit, "the request's own refusal is not retried on the logs")
}

// Release disposes a live top-level agent and its children child-first,
// leaving its session stored and resumable; it refuses a continuable
// child and leaves an id that is not live alone.
func TestReleaseDisposesATopLevelAgentAndKeepsItStored(t *testing.T) {
	rt := open(t, Options{Dir: t.TempDir()})
	p, err := rt.StartAgent(bg, "parent")
	require.NoError(t, err)
	child, err := rt.Spawn(bg, p, "worker", event.Text("sleep 1m"))
	require.NoError(t, err)
	require.ErrorIs(t, rt.Release(bg, child), fault.OwnedBySubagent)
	require.NoError(t, rt.Release(bg, "parent"))
	for _, id := range []string{"parent", child} {
		_, live := rt.Agent(id)
		require.False(t, live, "%s was disposed", id)
	}
	listed, err := rt.Sessions(bg)
	require.NoError(t, err)
	require.False(t, sessionOf(t, listed, "parent").Live, "stored, not live")
	require.NoError(t, rt.Release(bg, "parent"), "an id not live is left alone")
	_, err = rt.ResumeAgent(bg, "parent")
	require.NoError(t, err, "a released session is resumed")
}

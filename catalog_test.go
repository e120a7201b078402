package dsh

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/index"
	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// storedLog is a log of id with a child descriptor when label is not "".
func storedLog(id, parentID, label string) session.Log {
	h := session.Header{ID: id, CreatedAt: 1, ParentSession: parentID}
	events := []session.Event{
		{Type: "user/message", Seq: 0, Time: 1, SurfaceOp: json.RawMessage(`"append"`),
			Data: json.RawMessage(`{"content":[{"type":"text","text":"find the blue lagoon"}],"source":{"kind":"user"},"role":"user","id":"m1"}`)},
	}
	if label != "" {
		h.Origin = "subagent"
		events = append(events, session.Event{Type: "subagent/descriptor", Seq: 1, Time: 1,
			Data: json.RawMessage(`{"version":1,"provider":"spawn","label":"` + label + `"}`)})
	}
	return session.Log{Header: h, Events: events}
}

// TestChildrenBuildTheIndexOnFirstUse: the derived index file appears
// with the first listing, answers as the logs do, and NoIndex never
// makes it.
func TestChildrenBuildTheIndexOnFirstUse(t *testing.T) {
	for _, noIndex := range []bool{false, true} {
		dir := t.TempDir()
		require.NoError(t, storetest.WriteSynthetic(dir, storedLog("p", "", ""), storedLog("c", "p", "researcher")))
		rt := open(t, Options{Dir: dir, NoIndex: noIndex})
		_, err := os.Stat(filepath.Join(dir, index.FileName))
		require.ErrorIs(t, err, os.ErrNotExist, "before the first listing")

		children, err := rt.Children(bg, "p")
		require.NoError(t, err)
		require.Equal(t, []agent.Child{{ID: "c", Label: "researcher", Status: "complete"}}, children)
		_, err = os.Stat(filepath.Join(dir, index.FileName))
		if noIndex {
			require.ErrorIs(t, err, os.ErrNotExist, "NoIndex made the index")
		} else {
			require.NoError(t, err, "the first listing made no index")
		}
	}
}

// TestHistoryOfADamagedLogKeepsTheReadablePrefix: a log damaged in its
// middle (a committed turn/end follows the damage) fails with an error
// naming the file, carrying the read's code and, for ReadablePrefix, the
// events before the damage.
func TestHistoryOfADamagedLogKeepsTheReadablePrefix(t *testing.T) {
	dir := t.TempDir()
	log := storedLog("d", "", "")
	log.Events = append(log.Events,
		session.Event{Type: "feedback/record", Seq: 1, Time: 1, Data: json.RawMessage(`{"n":1}`)},
		session.Event{Type: "turn/end", Seq: 2, Time: 1, Data: json.RawMessage(`{"turn":1,"reason":{"kind":"completed"}}`)})
	require.NoError(t, storetest.WriteSynthetic(dir, log))
	paths, err := filepath.Glob(filepath.Join(dir, "*", "*", "session.jsonl"))
	require.NoError(t, err)
	require.Len(t, paths, 1)
	raw, err := os.ReadFile(paths[0])
	require.NoError(t, err)
	lines := strings.Split(string(raw), "\n")
	lines[2] = `{"type":"feedback/record","seq":1,` // the second event line, cut
	require.NoError(t, os.WriteFile(paths[0], []byte(strings.Join(lines, "\n")), 0o600))

	rt := open(t, Options{Dir: dir})
	_, err = rt.History(bg, "d")
	require.ErrorIs(t, err, fault.QueryPersistenceFailed)
	require.Contains(t, err.Error(), paths[0])
	readable, line, ok := ReadablePrefix(err)
	require.True(t, ok, "no readable prefix in %v", err)
	require.Equal(t, 2, line)
	require.Len(t, readable, 1)
	require.Equal(t, "user/message", readable[0].Type)
	_, _, ok = ReadablePrefix(fault.New(fault.QuerySessionNotFound, "not found", nil))
	require.False(t, ok, "a prefix for an unknown session")
}

// TestSearchValidatesOnAMemoryRuntime: a memory-only runtime finds
// nothing, and still refuses a bad request by code.
func TestSearchValidatesOnAMemoryRuntime(t *testing.T) {
	rt := open(t, Options{})
	page, err := rt.Search(bg, SearchRequest{Phrase: "anything"})
	require.NoError(t, err)
	require.Empty(t, page.Hits)
	_, err = rt.Search(bg, SearchRequest{Phrase: "anything", Offset: -1})
	require.ErrorIs(t, err, fault.QueryInvalidLimit)
	_, err = rt.Search(bg, SearchRequest{Phrase: " "})
	require.ErrorIs(t, err, fault.QueryInvalidQuery)
	require.Equal(t, index.MaxLimit, SearchMaxLimit, "the root's search limit is not the index's")
	require.Equal(t, 20, index.DefaultLimit, "SearchRequest.Limit's documented default is not the index's")
}

// TestReadsOfAClosedRuntimeFail: after Close every read is fault.Closed.
func TestReadsOfAClosedRuntimeFail(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, storetest.WriteSynthetic(dir, storedLog("p", "", "")))
	rt, err := Open(Options{Dir: dir})
	require.NoError(t, err)
	_, err = rt.Children(bg, "p")
	require.NoError(t, err)
	require.NoError(t, rt.Close())
	_, err = rt.Children(bg, "p")
	require.ErrorIs(t, err, fault.Closed, "Children")
	_, err = rt.Search(bg, SearchRequest{Phrase: "blue"})
	require.ErrorIs(t, err, fault.Closed, "Search")
	_, err = rt.Sessions(bg)
	require.ErrorIs(t, err, fault.Closed, "Sessions")
}

// TestSessionsCancelled: a done ctx is fault.Cancelled, not a store
// failure.
func TestSessionsCancelled(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, storetest.WriteSynthetic(dir, storedLog("p", "", "")))
	rt := open(t, Options{Dir: dir})
	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err := rt.Sessions(ctx)
	require.ErrorIs(t, err, fault.Cancelled)
	require.ErrorIs(t, err, context.Canceled)
}

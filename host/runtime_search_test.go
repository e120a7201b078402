package host

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/index"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// servedStore is a handler over a runtime opened on a store root, with the
// derived index (indexed) or without it.
func servedStore(t *testing.T, root string, indexed bool) (*actors.Runtime, *Handler) {
	t.Helper()
	ctx := context.Background()
	rt, err := actors.New(actors.Options{Root: root})
	require.NoError(t, err)
	q := query.New(rt.Sessions())
	var opts []BackendOption
	var db *index.DB
	if indexed {
		db, err = index.Open(ctx, root, rt.Sessions())
		require.NoError(t, err)
		opts = append(opts, WithIndex(db))
	}
	b := NewRuntimeBackend(rt, catalogOnly{q}, q, opts...)
	h := New(b, Options{})
	t.Cleanup(func() {
		h.Close()
		b.Close()
		require.NoError(t, rt.Close(ctx))
		if db != nil {
			require.NoError(t, db.Close())
		}
	})
	return rt, h
}

// listedTitles are session.list's rows as sessionId → projections (nil
// for a row without).
func listedTitles(t *testing.T, h *Handler) map[string]*sessionProjections {
	t.Helper()
	r := callRPC(t, h, "session.list", map[string]any{})
	require.True(t, r.Result.OK, "%+v", r.Result.Error)
	var value sessionItems
	require.NoError(t, json.Unmarshal(r.Result.Value, &value))
	out := map[string]*sessionProjections{}
	for _, item := range value.Items {
		out[item.SessionID] = item.Projections
	}
	return out
}

func searched(t *testing.T, h *Handler, payload map[string]any) searchValue {
	t.Helper()
	r := callRPC(t, h, "session.search", payload)
	require.True(t, r.Result.OK, "%+v", r.Result.Error)
	var value searchValue
	require.NoError(t, json.Unmarshal(r.Result.Value, &value))
	return value
}

// TestStoredSessionsKeepTheirTitlesAfterARestart: conversations held in a
// store are listed with their titles (as of their last stored event) by a
// restarted stack, indexed and unindexed alike, and session.search finds
// their words through either reader with the same answer.
func TestStoredSessionsKeepTheirTitlesAfterARestart(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	rt, _ := servedStore(t, root, true)
	for id, script := range map[string]string{
		"alpha": "reply the zebra crossed\nreply again a zebra, a zebra",
		"beta":  "reply 第一行 zebra\nsecond line",
	} {
		h, err := rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: id, CreatedAt: 1000}})
		require.NoError(t, err)
		converse(t, h, script)
	}
	_, err := rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: "empty", CreatedAt: 1000}})
	require.NoError(t, err)
	require.NoError(t, rt.Close(ctx))
	store, err := session.OpenJSONL(root)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	lastSeq := func(id string) int64 {
		log, err := store.Inspect(ctx, id)
		require.NoError(t, err)
		if len(log.Events) == 0 {
			return -1
		}
		return log.Events[len(log.Events)-1].Seq
	}

	var answers []any
	for _, indexed := range []bool{true, false, true} {
		_, h := servedStore(t, root, indexed)
		titles := listedTitles(t, h)
		require.Len(t, titles, 3)
		for id, want := range map[string]string{"alpha": "reply the zebra crossed", "beta": "reply 第一行 zebra"} {
			require.NotNil(t, titles[id], "%s (indexed %v)", id, indexed)
			require.Equal(t, want, *titles[id].Values.Title, "indexed %v", indexed)
			require.Equal(t, lastSeq(id), titles[id].AsOfSeq, "indexed %v", indexed)
		}
		require.Equal(t, &sessionProjections{AsOfSeq: lastSeq("empty")}, titles["empty"], "no user message: title null")
		hits := searched(t, h, map[string]any{"query": "  ZEBRA "})
		require.NotEmpty(t, hits.Hits)
		require.Equal(t, "alpha", hits.Hits[0].SessionID, "the most matches rank first")
		first := searched(t, h, map[string]any{"query": "zebra", "limit": 1})
		require.Equal(t, hits.Hits[:1], first.Hits)
		require.True(t, first.HasMore)
		answers = append(answers, titles, hits)
	}
	require.Equal(t, answers[0:2], answers[2:4], "indexed and unindexed answer alike")
	require.Equal(t, answers[0:2], answers[4:6], "a warm index answers alike")
}

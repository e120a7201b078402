package host

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// listedTitles are session.list's rows as sessionId → projections (nil
// for a row without).
func listedTitles(t *testing.T, h http.Handler) map[string]*sessionProjections {
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

func searched(t *testing.T, h http.Handler, payload map[string]any) searchValue {
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
	first := newRuntimeStackOn(t, root, true, "")
	rt := first.rt
	for id, script := range map[string]string{
		"alpha": "reply the zebra crossed\nreply again a zebra, a zebra",
		"beta":  "reply 第一行 zebra\nsecond line",
	} {
		started(t, rt, id)
		converse(t, rt, id, script)
	}
	started(t, rt, "empty")
	first.stop()
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
		s := newRuntimeStackOn(t, root, indexed, "")
		h := s.recorder
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
		s.stop()
	}
	require.Equal(t, answers[0:2], answers[2:4], "indexed and unindexed answer alike")
	require.Equal(t, answers[0:2], answers[4:6], "a warm index answers alike")
}

// TestStoredFailedTurnListsAfterARestart: a stored session whose last turn
// failed lists that outcome after a restart, whether the index or its log
// titles the row.
func TestStoredFailedTurnListsAfterARestart(t *testing.T) {
	root := t.TempDir()
	first := newRuntimeStackOn(t, root, true, "")
	for _, id := range []string{"failed", "fine"} {
		started(t, first.rt, id)
		converse(t, first.rt, id, "reply first")
	}
	first.failTurn(t, "failed", "reply again", vocab.Failure{Message: "upstream exploded", Code: "HTTP_500"})
	first.stop()
	for _, indexed := range []bool{true, false} {
		s := newRuntimeStackOn(t, root, indexed, "")
		r := callRPC(t, s.recorder, "session.list", map[string]any{})
		require.True(t, r.Result.OK, "%+v", r.Result.Error)
		var value sessionItems
		require.NoError(t, json.Unmarshal(r.Result.Value, &value))
		turns := map[string]*turnOutcome{}
		for _, item := range value.Items {
			turns[item.SessionID] = item.LastTurn
		}
		require.Equal(t, map[string]*turnOutcome{
			"failed": {Kind: vocab.ReasonError, Message: "upstream exploded", Code: "HTTP_500"},
			"fine":   nil,
		}, turns, "indexed %v", indexed)
		s.stop()
	}
}

package pgstore

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/storegen"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// catalogWorld adds to a JSONL store the children the catalog suite
// diagnoses: two own descriptors, a malformed one, an unlabelled one, a
// future version, a descriptor only inside a fork seed, and siblings
// tied on createdAt (ordered by id as the catalog does: b before B).
func catalogWorld(t *testing.T, s *session.JSONL) {
	descriptorEvent := func(seq int64, d map[string]any) session.Event {
		data, err := json.Marshal(d)
		require.NoError(t, err)
		return session.Event{Type: vocab.TypeSubagentDescriptor, Seq: seq, Time: 1_783_000_000_000 + seq, Data: data}
	}
	label := func(l string) map[string]any { return map[string]any{"version": 1, "provider": "spawn", "label": l} }
	child := func(id string, createdAt int64, seed ...session.Event) session.Header {
		h := session.Header{ID: id, CreatedAt: createdAt, Cwd: "/work/catalog", ParentSession: "cat-parent", Origin: "subagent", DelegationDepth: 1}
		require.NoError(t, s.Create(ctx, h, seed))
		return h
	}
	require.NoError(t, s.Create(ctx, session.Header{ID: "cat-parent", CreatedAt: 1_783_000_000_000, Cwd: "/work/catalog"}, nil))
	child("healthy", 1_783_000_000_001, descriptorEvent(0, label("fine")))
	child("duplicate", 1_783_000_000_002, descriptorEvent(0, label("one")), descriptorEvent(1, label("two")))
	child("malformed", 1_783_000_000_003, descriptorEvent(0, map[string]any{"version": 1, "provider": 7, "label": "x"}))
	child("unlabelled", 1_783_000_000_004, descriptorEvent(0, map[string]any{"version": 1, "provider": "spawn"}))
	child("future", 1_783_000_000_005, descriptorEvent(0, map[string]any{"version": 2, "provider": "spawn", "label": "x"}))
	seedLength := 2
	forked := session.Header{ID: "forked", CreatedAt: 1_783_000_000_006, Cwd: "/work/catalog", ParentSession: "cat-parent", SeedLength: &seedLength, DelegationDepth: 1}
	require.NoError(t, s.Create(ctx, forked, []session.Event{descriptorEvent(0, label("ancestor")), {Type: vocab.TypeSessionEndSeed, Seq: 1, Time: 1, Data: json.RawMessage(`{}`)}}))
	child("b-lower", 1_783_000_000_007, descriptorEvent(0, label("second")))
	child("B-upper", 1_783_000_000_007, descriptorEvent(0, label("first")))
}

// ListChildren on the Postgres store, one query, answers exactly as the
// catalog reader over the JSONL store the data was imported from:
// children, labels, statuses, diagnostics, order and whole-call failures.
func TestListChildrenQueryAnswersAsTheJSONLCatalog(t *testing.T) {
	src := world(t)
	jsonl := openJSONL(t, src)
	catalogWorld(t, jsonl)
	s := openStore(t, cluster.Database(t))
	_, err := s.Import(ctx, jsonl)
	require.NoError(t, err)
	overJSONL := query.New(session.NewSessions(jsonl))
	for _, parent := range []string{"cat-parent", storegen.Parent, storegen.ChildID(0), otherID(0), otherID(10), "interrupted", "missing"} {
		want, wantErr := query.ListChildren(ctx, overJSONL, parent)
		got, gotErr := s.ListChildren(ctx, parent)
		require.Equal(t, want, got, parent)
		if wantErr != nil {
			require.EqualError(t, gotErr, wantErr.Error(), parent)
			require.Equal(t, fault.CodeOf(wantErr), fault.CodeOf(gotErr), parent)
		} else {
			require.NoError(t, gotErr, parent)
		}
	}
	listed, err := s.ListChildren(ctx, "cat-parent")
	require.NoError(t, err)
	require.Equal(t, []query.Entry{
		{Kind: query.KindChild, ID: "healthy", Label: "fine", Status: query.StatusComplete},
		{Kind: query.KindDiagnostic, ID: "duplicate", Reason: query.ReasonCorrupt},
		{Kind: query.KindDiagnostic, ID: "malformed", Reason: query.ReasonCorrupt},
		{Kind: query.KindDiagnostic, ID: "unlabelled", Reason: query.ReasonCorrupt},
		{Kind: query.KindDiagnostic, ID: "future", Reason: query.ReasonUnsupported},
		{Kind: query.KindChild, ID: "b-lower", Label: "second", Status: query.StatusComplete},
		{Kind: query.KindChild, ID: "B-upper", Label: "first", Status: query.StatusComplete},
	}, listed, "the fork seed's ancestor descriptor does not count; tied siblings in the catalog's id order")

	epoch, err := s.Acquire(ctx, "healthy")
	require.NoError(t, err)
	listed, err = s.ListChildren(ctx, "cat-parent")
	require.NoError(t, err)
	require.Equal(t, query.StatusRunning, listed[0].Status, "a child whose lease this store holds (live in this process) is running")
	require.NoError(t, s.Release(ctx, "healthy", epoch))

	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.ListChildren(done, "cat-parent")
	require.Equal(t, fault.Cancelled, fault.CodeOf(err))
}

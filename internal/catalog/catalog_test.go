package catalog

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/session"
)

// TestSiblingOrderIsCreatedAtThenLocaleCompare: siblings come in
// createdAt order, ties in the original's localeCompare order of ids
// (letters before their capitals, punctuation before digits before
// letters), equal collations in byte order.
func TestSiblingOrderIsCreatedAtThenLocaleCompare(t *testing.T) {
	at := func(createdAt int64, id string) Record {
		return Record{Header: session.Header{ID: id, CreatedAt: createdAt}}
	}
	records := []Record{at(2, "a"), at(1, "B"), at(1, "b"), at(1, "_x"), at(1, "10"), at(1, "e\u0301"), at(1, "\u00e9"), at(0, "z")}
	slices.SortFunc(records, SiblingOrder)
	var ids []string
	for _, r := range records {
		ids = append(ids, r.Header.ID)
	}
	require.Equal(t, []string{"z", "_x", "10", "b", "B", "e\u0301", "\u00e9", "a"}, ids)
}

// TestCompatibleHeadersIsASourceConflictOnAnyImmutableField: headers that
// differ in a compared field are SESSION_QUERY_SOURCE_CONFLICT naming the
// id; a difference in a field the merge does not compare is not.
func TestCompatibleHeadersIsASourceConflictOnAnyImmutableField(t *testing.T) {
	seed := 2
	base := session.Header{ID: "s", CreatedAt: 1, Cwd: "/w", ParentSession: "p", DelegationDepth: 1}
	require.NoError(t, CompatibleHeaders(base, base))
	other := base
	other.Origin = "subagent"
	require.NoError(t, CompatibleHeaders(base, other), "origin is not compared")
	for name, change := range map[string]func(*session.Header){
		"createdAt":       func(h *session.Header) { h.CreatedAt = 2 },
		"cwd":             func(h *session.Header) { h.Cwd = "/v" },
		"parentSession":   func(h *session.Header) { h.ParentSession = "q" },
		"seedLength":      func(h *session.Header) { h.SeedLength = &seed },
		"delegationDepth": func(h *session.Header) { h.DelegationDepth = 2 },
	} {
		changed := base
		change(&changed)
		err := CompatibleHeaders(base, changed)
		require.ErrorIs(t, err, fault.QuerySourceConflict, name)
		require.EqualError(t, err, `session source headers conflict for session "s"`, name)
	}
}

// TestCheckpointIsCancelledOnceTheContextIsDone: nil while ctx is live,
// then CANCELLED wrapping ctx's cause.
func TestCheckpointIsCancelledOnceTheContextIsDone(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	require.NoError(t, Checkpoint(ctx))
	cause := errors.New("caller gave up")
	cancel(cause)
	err := Checkpoint(ctx)
	require.ErrorIs(t, err, fault.Cancelled)
	require.ErrorIs(t, err, cause)
	require.ErrorContains(t, err, "subagent listing was cancelled")
}

package query

import (
	"context"
	"errors"
	"github.com/dsh-actors/dsh-actors/fault"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/session"
)

// IndexedCatalog, when set (indexed_test.go sets it), opens the derived
// index over a store root and its live registry. Every world listing then
// runs through the unindexed reader, a warm index kept by the world and a
// cold index opened for that call, and requires identical answers.
var IndexedCatalog func(t *testing.T, root string, sessions *session.Sessions) (Catalog, func())

// requireSameListing requires an indexed answer identical to the
// unindexed one: the same entries, or errors with the same code, message
// and cause.
func requireSameListing(t *testing.T, entries []Entry, err error, got []Entry, gotErr error, which string) {
	t.Helper()
	require.Equal(t, entries, got, which)
	if err == nil {
		require.NoError(t, gotErr, which)
		return
	}
	require.EqualError(t, gotErr, err.Error(), which)
	var want, have *fault.Error
	if errors.As(err, &want) {
		require.True(t, errors.As(gotErr, &have), which)
		require.Equal(t, want.Code, have.Code, which)
	}
}

// listAllWays is world.list's body.
func (w *world) listAllWays(parent string) ([]Entry, error) {
	ctx := context.Background()
	entries, err := ListChildren(ctx, w.q, parent)
	if IndexedCatalog == nil {
		return entries, err
	}
	if w.indexed == nil {
		var closeIndex func()
		w.indexed, closeIndex = IndexedCatalog(w.t, w.jsonl.Root(), w.sessions)
		w.t.Cleanup(closeIndex)
	}
	got, gotErr := w.indexed.ListChildren(ctx, parent)
	requireSameListing(w.t, entries, err, got, gotErr, "warm index")
	cold, closeCold := IndexedCatalog(w.t, w.jsonl.Root(), w.sessions)
	got, gotErr = cold.ListChildren(ctx, parent)
	closeCold()
	requireSameListing(w.t, entries, err, got, gotErr, "cold index")
	return entries, err
}

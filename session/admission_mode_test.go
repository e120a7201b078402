package session_test

import (
	"context"
	"testing"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// TestDurableAdmissionStaysWithTheStore: once a store was opened in the
// durable admission mode, every later open of its root is in that mode
// too (whatever resumes a child then runs its pending messages first, in
// admission order), and sees what was admitted; a store never opened in
// it stays without.
func TestDurableAdmissionStaysWithTheStore(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	plain, err := session.OpenJSONL(root)
	require.NoError(t, err)
	_, ok := session.InboxOf(plain)
	require.False(t, ok, "a store never opened durably admits in memory")
	require.NoError(t, plain.Close())

	first, err := session.OpenJSONL(root, session.WithDurableAdmission())
	require.NoError(t, err)
	in, ok := session.InboxOf(first)
	require.True(t, ok)
	require.NoError(t, first.Create(ctx, storetest.Header("p", ""), nil))
	require.NoError(t, first.Create(ctx, storetest.Header("c", "p"), nil))
	epoch, err := first.Acquire(ctx, "p")
	require.NoError(t, err)
	for _, id := range []string{"m1", "m2"} {
		fresh, err := in.Admit(ctx, "c", storetest.Message(id, "p", epoch))
		require.NoError(t, err)
		require.True(t, fresh)
	}
	require.NoError(t, first.Release(ctx, "p", epoch))
	require.NoError(t, first.Close())

	again, err := session.OpenJSONL(root) // serve without the flag, send, check
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, again.Close()) })
	in, ok = session.InboxOf(again)
	require.True(t, ok, "the store keeps its durable admission mode")
	pending, err := in.Pending(ctx, "c")
	require.NoError(t, err)
	require.Len(t, pending, 2)
	require.Equal(t, "m1", pending[0].MessageID, "in admission order")
	require.Equal(t, "m2", pending[1].MessageID)
}

// TestAUserPromptIsAdmittedToATopLevelSessionOnly: From "" admits a
// user's message to a session whose header names no parent; a child
// takes messages from its parent only.
func TestAUserPromptIsAdmittedToATopLevelSessionOnly(t *testing.T) {
	ctx := context.Background()
	store, err := session.OpenJSONL(t.TempDir(), session.WithDurableAdmission())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	in, ok := session.InboxOf(store)
	require.True(t, ok)
	require.NoError(t, store.Create(ctx, storetest.Header("p", ""), nil))
	require.NoError(t, store.Create(ctx, storetest.Header("c", "p"), nil))
	fresh, err := in.Admit(ctx, "p", storetest.Message("u1", "", 0))
	require.NoError(t, err)
	require.True(t, fresh)
	_, err = in.Admit(ctx, "c", storetest.Message("u2", "", 0))
	require.ErrorIs(t, err, fault.Unauthorized)
	pending, err := in.Pending(ctx, "p")
	require.NoError(t, err)
	require.Len(t, pending, 1)
	require.Equal(t, "u1", pending[0].MessageID)
}

package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// TestCheckReportsPendingMessages: messages a durable inbox admitted and
// no turn ran yet (a crash before the turn) are reported, oldest first,
// as what the session runs first when it resumes: information, not
// damage (the exit status stays 0).
func TestCheckReportsPendingMessages(t *testing.T) {
	ctx := context.Background()
	root := healthyStore(t)
	store, err := session.OpenJSONL(root, session.WithDurableAdmission())
	require.NoError(t, err)
	in, ok := session.InboxOf(store)
	require.True(t, ok)
	epoch, err := store.Acquire(ctx, "parent")
	require.NoError(t, err)
	for _, id := range []string{"m-older", "m-newer"} {
		_, err := in.Admit(ctx, "child-b", storetest.Message(id, "parent", epoch))
		require.NoError(t, err)
	}
	require.NoError(t, store.Release(ctx, "parent", epoch))
	require.NoError(t, store.Close())

	code, out, stderr := run(t, "check", "--store", root)
	require.Equal(t, 0, code, stderr)
	inbox := filepath.Join(root, "--work--", "child-b", "session.inbox")
	require.Contains(t, out, "pending "+inbox+": 2 admitted messages not run yet (m-older, m-newer); they run first, in this order, when the session resumes\n")
	require.Contains(t, out, "no damage found")

	code, out, _ = run(t, "check", "--json", "--store", root)
	require.Equal(t, 0, code)
	var got []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got, 1)
	require.Equal(t, "pending", got[0]["kind"])
	require.Equal(t, inbox, got[0]["path"])
}

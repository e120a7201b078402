package activation

import (
	"log/slog"
	"testing"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// An activation whose session lease was taken over (its process paused
// past the lease, say) is fenced on its next write: the turn's events
// never reach the log, the message is reported lost naming FENCED, and
// the new holder's log has no byte of it.
func TestAFencedActivationWritesNothingAndReportsItsMessageLost(t *testing.T) {
	ctx := testkit.Context(t)
	var logs testkit.SyncBuffer
	root := t.TempDir()
	store, err := session.OpenJSONL(root)
	require.NoError(t, err)
	reg := session.NewSessions(store)
	live, err := reg.Create(bg, session.Header{ID: "agent-1", Cwd: "/work"}, nil)
	require.NoError(t, err)
	a := startOn(t, live, agent.Scripted(agent.Options{}), nil, func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	followup(t, a, "reply kept")
	require.NoError(t, a.WhenIdle(ctx))
	_, err = reg.Flush(ctx, live)
	require.NoError(t, err)
	before, err := store.Inspect(bg, "agent-1")
	require.NoError(t, err)

	// The lease moves to another store over the root (another process).
	epoch, err := store.Acquire(bg, "agent-1")
	require.ErrorIs(t, err, fault.LeaseHeld, "the live session holds it")
	require.Zero(t, epoch)
	require.NoError(t, store.Release(bg, "agent-1", 1), "the lease ends behind the session's back (the first epoch)")
	other, err := session.OpenJSONL(root)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, other.Close()) })
	_, err = other.Acquire(bg, "agent-1")
	require.NoError(t, err)

	lost := followup(t, a, "reply fenced")
	require.NoError(t, a.WhenIdle(ctx))
	_, err = reg.Flush(ctx, live)
	require.ErrorIs(t, err, fault.Fenced)
	require.Contains(t, lostLines(t, logs.String()), lost)
	require.Contains(t, logs.String(), "epoch 1 is no longer the current lease")
	after, err := other.Inspect(bg, "agent-1")
	require.NoError(t, err)
	require.Equal(t, before.Events, after.Events, "nothing of the fenced turn was written")
	require.ErrorIs(t, reg.Release(bg, live), fault.Fenced)
	require.NoError(t, store.Close())
}

package pgstore

import (
	"context"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/stretchr/testify/require"
)

// Recording a cut-off wakes each session below the parent that a process
// holds (not one nobody holds), Drained tells it apart from a session no
// drain closes, and AwaitReleasedBelow returns once the holder, another
// store, released every held session below the parent; until then it
// waits, and gives up with ctx.
func TestACutOffWakesTheHeldDescendantsAndTheDrainAwaitsTheirRelease(t *testing.T) {
	dsn := cluster.Database(t)
	home, away := openStore(t, dsn, WithOwner("home")), openStore(t, dsn, WithOwner("away"))
	for _, h := range [][2]string{{"p", ""}, {"c", "p"}, {"g", "c"}, {"idle", "p"}, {"other", ""}} {
		require.NoError(t, home.Create(ctx, storetest.Header(h[0], h[1]), nil))
	}
	parentEpoch, err := home.Acquire(ctx, "p")
	require.NoError(t, err)
	childEpoch, err := away.Acquire(ctx, "c")
	require.NoError(t, err)
	grandchildEpoch, err := away.Acquire(ctx, "g")
	require.NoError(t, err)
	_, err = away.Acquire(ctx, "other")
	require.NoError(t, err)

	woken := make(chan string, 8)
	listening := make(chan struct{})
	listenCtx, stopListening := context.WithCancel(ctx)
	defer stopListening()
	listened := make(chan struct{})
	go func() {
		defer close(listened)
		_ = durableInbox{away}.Listen(listenCtx, func() { close(listening) }, func(id string) { woken <- id })
	}()
	testkit.Receive(t, listening, "the listener to listen")
	in := durableInbox{home}
	require.NoError(t, in.CloseAdmission(ctx, "p", parentEpoch))
	got := []string{<-woken, <-woken}
	require.ElementsMatch(t, []string{"c", "g"}, got, "the held sessions below the parent are woken")
	for id, want := range map[string]bool{"c": true, "g": true, "idle": true, "p": false, "other": false} {
		drained, err := in.Drained(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, drained, "drained %s", id)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, in.AwaitReleasedBelow(cancelled, "p"), context.Canceled, "c and g are held")
	awaited := make(chan error, 1)
	go func() { awaited <- in.AwaitReleasedBelow(ctx, "p") }()
	require.NoError(t, away.Release(ctx, "g", grandchildEpoch))
	require.NoError(t, away.Release(ctx, "c", childEpoch))
	require.NoError(t, testkit.Receive(t, awaited, "AwaitReleasedBelow after both releases"))
	stopListening()
	testkit.Receive(t, listened, "the listener to stop")
	require.Empty(t, woken, "nothing else was woken")
}

// A release of a session a drain marked is heard on the released
// channel, whatever store releases it.
func TestTheReleaseOfADrainedSessionIsHeard(t *testing.T) {
	dsn := cluster.Database(t)
	home, away := openStore(t, dsn, WithOwner("home")), openStore(t, dsn, WithOwner("away"))
	for _, h := range [][2]string{{"p", ""}, {"c", "p"}} {
		require.NoError(t, home.Create(ctx, storetest.Header(h[0], h[1]), nil))
	}
	parentEpoch, err := home.Acquire(ctx, "p")
	require.NoError(t, err)
	childEpoch, err := away.Acquire(ctx, "c")
	require.NoError(t, err)
	require.NoError(t, durableInbox{home}.CloseAdmission(ctx, "p", parentEpoch))

	listenCtx, stop := context.WithCancel(ctx)
	released, listened := home.listenReleased(listenCtx)
	require.NoError(t, away.Release(ctx, "c", childEpoch))
	testkit.Receive(t, released, "the release notification")
	stop()
	testkit.Receive(t, listened, "the release listener to stop")
}

// A session under a drain cut-off in force is not orphaned, whatever it
// has pending and whoever holds it: the drain settles its pending
// messages, so neither Orphaned nor the sweep's wakes report it. Once
// the drain's parent gives its lease up, the cut-off no longer holds and
// the session is an orphan again.
func TestADrainedSessionIsNotOrphaned(t *testing.T) {
	dsn := cluster.Database(t)
	home, sweeper := openStore(t, dsn, WithOwner("home")), openStore(t, dsn, WithOwner("sweeper"))
	pe := family(t, home, "drained", "orphan")
	in := durableInbox{home}
	for _, c := range []string{"drained", "orphan"} {
		_, err := in.Admit(ctx, c, storetest.Message(c+"-m", "p", pe))
		require.NoError(t, err)
	}
	// Close admission below p, then take "orphan" out of the cut-off (as
	// if it had been admitted under another parent): only "drained" is cut.
	require.NoError(t, in.CloseAdmission(ctx, "p", pe))
	conn := connect(t, dsn)
	_, err := conn.Exec(ctx, `UPDATE sessions SET drain_id = NULL WHERE id = 'orphan'`)
	require.NoError(t, err)

	for id, want := range map[string]bool{"drained": false, "orphan": true} {
		orphaned, err := in.Orphaned(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, orphaned, id)
	}
	woken, err := sweeper.wakeOrphans(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"orphan"}, woken, "the sweep wakes no drained session")

	require.NoError(t, home.Release(ctx, "p", pe))
	orphaned, err := in.Orphaned(ctx, "drained")
	require.NoError(t, err)
	require.True(t, orphaned, "the cut-off ended with its parent's lease")
	woken, err = sweeper.wakeOrphans(ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"drained", "orphan"}, woken)
}

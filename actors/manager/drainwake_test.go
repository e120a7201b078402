package manager

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/pgstore"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// starts counts the subagent/start edges of id's epochs.
func (f *fixture) starts(id string) int {
	_, starts, _ := f.rec.snapshot()
	n := 0
	for _, s := range starts {
		if s.ID == id {
			n++
		}
	}
	return n
}

// A cold resume of a child below a drained ancestor never becomes
// resident: the message its durable inbox held from before the drain is
// discarded, not run. Two runtimes share one JSONL store (its cut-offs
// are the store's memory): the drain runs in one; the resume is asked
// for in the other, by a live agent whose header names the drained
// parent, so only the store's cut-off stops it. (On Postgres the drain
// would wait for that agent's lease below its parent to end; the wake
// test below covers the Postgres store.)
func TestAColdResumeBelowADrainedAncestorDiscardsItsPendingMessages(t *testing.T) {
	ctx := testkit.Context(t)
	store, err := session.OpenJSONL(t.TempDir(), session.WithDurableAdmission(), session.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	home := newFixture(t, withStore(store))
	away := newFixture(t, withStore(store), withTopLevel("elsewhere"))
	middle, err := away.rt.StartAgent(bg, parent.CreateSpec{Header: session.Header{ID: "middle", ParentSession: home.parent.ID()}})
	require.NoError(t, err)
	child := away.start(middle, "silent")
	away.settled(child, 1)
	in, _ := session.InboxOf(store)
	_, err = in.Admit(bg, child, durableMessage(t, "before", middle.ID(), middle.Session().Epoch()))
	require.NoError(t, err)
	require.NoError(t, home.m.DrainContinuableDescendants(ctx, []*parent.Handle{home.parent}))

	_, err = away.m.Followup(ctx, middle, child, event.Text("after"), event.Source{Kind: "user"})
	require.ErrorIs(t, err, fault.Draining)
	require.Equal(t, 1, away.starts(child), "the resumed epoch was never published")
	require.Nil(t, away.activation(child))
	require.Equal(t, []string{"silent"}, away.userTexts(child))
	pending, err := in.Pending(bg, child)
	require.NoError(t, err)
	require.Empty(t, pending, "the message from before the drain was settled as the drain does")
}

// drainedWithAPendingMessage is the home process on Postgres with its
// settled child, a message admitted to the child's durable inbox, then a
// scoped drain of the child's parent, and a second process ("away") on the
// same database; neither process hears wakes (a test delivers them by
// hand).
func drainedWithAPendingMessage(t *testing.T) (home *fixture, homeStore *pgstore.Store, in session.DurableInbox, child string, away *fixture) {
	t.Helper()
	dsn := cluster.Database(t)
	home, homeStore, child = homeWithSettledChild(t, dsn)
	home.m.stopWakes(bg)
	in, _ = session.InboxOf(homeStore)
	_, err := in.Admit(bg, child, durableMessage(t, "wait before", home.parent.ID(), home.parent.Session().Epoch()))
	require.NoError(t, err)
	require.NoError(t, home.m.DrainContinuableDescendants(testkit.Context(t), []*parent.Handle{home.parent}))
	away = newFixture(t, withStore(openPostgres(t, dsn, "away")), withTopLevel("elsewhere"))
	away.m.stopWakes(bg)
	return home, homeStore, in, child, away
}

// A wake that reaches a process after a scoped drain of the child's
// parent returned (the message was admitted before the drain; nobody
// heard its wake until then) does not run the message, and the child
// does not become resident there. (The store's Orphaned already answers
// false below a drain in force; a takeover that read it before the
// cut-off was recorded meets the check after its acquire instead.)
func TestAWakeAfterADrainOfTheParentDiscardsThePendingMessage(t *testing.T) {
	home, _, _, child, away := drainedWithAPendingMessage(t)
	_, err := away.m.call(bg, wakeRequest{&op{kind: opWake, ctx: bg, childID: child}})
	if err != nil {
		require.ErrorIs(t, err, fault.Draining)
	}
	require.Zero(t, away.starts(child), "the woken child never became resident")
	require.Nil(t, away.activation(child))
	require.Equal(t, []string{"silent"}, home.userTexts(child), "the message did not run")
}

// Close honours its ctx while a wake is in flight: a wake blocked in the
// Started hook (the woken child's publication) does not hold Close past
// the end of its ctx, which is returned as CANCELLED; once the hook
// returns, a later Close completes and nothing leaks.
func TestCloseReturnsWhenItsContextEndsWhileAWakeIsBlocked(t *testing.T) {
	bounded := testkit.Context(t)
	dsn := cluster.Database(t)
	home, homeStore, child := homeWithSettledChild(t, dsn)
	home.m.stopWakes(bg)
	away := newFixture(t, withStore(openPostgres(t, dsn, "away")), withTopLevel("elsewhere"))
	reached, unblock := make(chan struct{}), make(chan struct{})
	away.rec.setOnStart(func(info RunInfo) error {
		if info.ID == child {
			close(reached)
			<-unblock
		}
		return nil
	})
	away.awaitListening()
	in, _ := session.InboxOf(homeStore)
	_, err := in.Admit(bg, child, durableMessage(t, "woken", home.parent.ID(), home.parent.Session().Epoch()))
	require.NoError(t, err)
	testkit.Receive(t, reached, "the woken child's publication to reach the Started hook")

	ctx, cancel := context.WithCancel(bg)
	closed := make(chan error, 1)
	go func() { closed <- away.m.Close(ctx) }()
	testkit.Until(t, func() bool { return len(away.m.closing) == 1 }, "Close to take its slot (past its first wait)")
	cancel()
	select {
	case err := <-closed:
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, fault.Cancelled, fault.CodeOf(err))
	case <-time.After(time.Minute):
		close(unblock)
		t.Fatal("Close ignored the end of its ctx while a wake was blocked")
	}
	close(unblock)
	require.NoError(t, away.m.Close(bounded))
}

// On Postgres, a takeover that read Orphaned before the drain's cut-off
// was recorded (the race the store's own check cannot close) meets the
// cut-off after its acquire: the epoch is rolled back unpublished, with
// DRAINING, and the message from before the drain is discarded under the
// new lease.
func TestATakeoverThatMissedTheCutOffMeetsItAfterItsAcquire(t *testing.T) {
	home, homeStore, in, child, away := drainedWithAPendingMessage(t)
	log, err := homeStore.Inspect(bg, child)
	require.NoError(t, err)
	d, err := continuationState(child, log)
	require.NoError(t, err)
	takeover := &op{kind: opWake, childID: child, ms: materializeSpec{childID: child, provider: d.Provider, resume: resumeSpec(d)}}
	_, err = away.call(bg, takeover, away.m.materialize) // orphanRead's takeover
	require.ErrorIs(t, err, fault.Draining)
	require.Zero(t, away.starts(child), "never published")
	require.Nil(t, away.activation(child))
	pending, err := in.Pending(bg, child)
	require.NoError(t, err)
	require.Empty(t, pending, "settled as the drain settles what it finds queued")
	require.Equal(t, []string{"silent"}, home.userTexts(child))
}

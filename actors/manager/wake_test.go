package manager

import (
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/durable"
	"github.com/dsh-actors/dsh-actors/internal/pgstore"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// openPostgres opens a store on dsn as owner, closed when t ends.
func openPostgres(t *testing.T, dsn, owner string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(bg, dsn, pgstore.WithOwner(owner), pgstore.WithTTL(time.Minute))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// homeWithSettledChild opens the "home" process on dsn's Postgres store
// with its parent and one child that settled its first turn.
func homeWithSettledChild(t *testing.T, dsn string) (home *fixture, store *pgstore.Store, child string) {
	t.Helper()
	store = openPostgres(t, dsn, "home")
	home = newFixture(t, withStore(store))
	child = home.start(home.parent, "silent")
	home.settled(child, 1)
	return home, store, child
}

// awaitListening waits until f's manager listens for wakes.
func (f *fixture) awaitListening() {
	f.t.Helper()
	require.NotNil(f.t, f.m.wakes.listening, "the store wakes")
	select {
	case <-f.m.wakes.listening:
	case <-time.After(time.Minute):
		f.t.Fatal("the manager never listened for wakes")
	}
}

// Two processes on one Postgres store: a message committed to a child's
// durable inbox wakes the process that hears it (here the only one
// listening), which takes the child over although its parent lives in
// the other process, and runs it; a follow-up the parent's process then
// sends is committed to the inbox (the other holds the lease), wakes the
// holder and runs there, after the running turn; the child settles there
// as the root of its own forest, its epoch's edges naming its parent.
func TestAFollowupReachesTheChildInTheProcessThatHoldsIt(t *testing.T) {
	dsn := cluster.Database(t)
	home, homeStore, child := homeWithSettledChild(t, dsn)
	home.m.stopWakes(bg) // deaf from now on: the other process is the one that hears wakes

	away := newFixture(t, withStore(openPostgres(t, dsn, "away")), withTopLevel("elsewhere"))
	away.awaitListening()
	in, _ := session.InboxOf(homeStore)
	_, err := in.Admit(bg, child, durableMessage(t, "wait away", home.parent.ID(), home.parent.Session().Epoch()))
	require.NoError(t, err)
	away.gates.reached("away")
	require.NotNil(t, away.activation(child), "the woken process holds the child")
	require.Nil(t, home.activation(child))
	var owner *activation
	var under *parent.Handle
	away.inActor(func() { a := away.m.st.activations[child]; owner, under = a.owner, a.under })
	require.Nil(t, owner, "its parent is not live here: the child is the root of its local forest")
	require.Nil(t, under, "its actor is spawned under no agent's")

	enqueued := make(chan string, 8)
	defer away.rt.Registry().Subscribe(func(e parent.Event) {
		if e.Type == inbox.Enqueue && e.AgentID == child {
			enqueued <- e.MessageID
		}
	})()
	id := home.followup(home.parent, child, "two")
	require.Equal(t, id, testkit.Receive(t, enqueued, "the woken holder's enqueue of the follow-up"), "the holder was woken and queued it behind the running turn")
	var hinted bool
	home.inActor(func() { hinted = home.m.st.elsewhere[child] })
	require.True(t, hinted, "the next follow-up goes to the inbox without a resume attempt")
	away.gates.open("away")
	end := away.settled(child, 1)
	require.Equal(t, agent.Completed, end.StopReason)
	require.Equal(t, home.parent.ID(), end.ParentID)
	require.Equal(t, []string{"silent", "wait away", "two"}, away.userTexts(child), "run in order, once each")
	pending, err := in.Pending(bg, child)
	require.NoError(t, err)
	require.Empty(t, pending)
	require.Nil(t, home.activation(child), "the parent's process never resumed it")
}

// A wake heard by two processes, neither holding the child, runs the
// message once: the lease decides which takes the child over, the other
// does nothing (or, if it acquires after the winner released, finds
// nothing pending).
func TestTwoListenersRaceForAWokenChildAndOneRunsIt(t *testing.T) {
	ctx := testkit.Context(t)
	dsn := cluster.Database(t)
	home, homeStore, child := homeWithSettledChild(t, dsn)
	away := newFixture(t, withStore(openPostgres(t, dsn, "away")), withTopLevel("elsewhere"))
	home.awaitListening()
	away.awaitListening()

	dequeued := make(chan *fixture, 2)
	for _, f := range []*fixture{home, away} {
		defer f.rt.Registry().Subscribe(func(e parent.Event) {
			if e.Type == inbox.Dequeue && e.AgentID == child && e.MessageID == "raced" {
				dequeued <- f
			}
		})()
	}
	in, _ := session.InboxOf(homeStore)
	_, err := in.Admit(bg, child, durableMessage(t, "raced", home.parent.ID(), home.parent.Session().Epoch()))
	require.NoError(t, err)
	winner := testkit.Receive(t, dequeued, "a listener's dequeue of the woken child's message")
	winner.settled(child, map[*fixture]int{home: 2, away: 1}[winner])
	require.NoError(t, home.rt.Close(ctx))
	require.NoError(t, away.rt.Close(ctx))
	require.Empty(t, dequeued, "the loser ran nothing")
	log, err := homeStore.Inspect(bg, child)
	require.NoError(t, err)
	runs := 0
	for _, e := range log.Events {
		if e.Type == vocab.TypeUserMessage && durable.MessageID(e.Data) == "raced" {
			runs++
		}
	}
	require.Equal(t, 1, runs)
}

// A scoped drain whose descendant runs in another process: the cut-off
// recorded in the store wakes that process, which cancels the running
// turn and disposes the child there, releasing it in SQL; the drain
// returns only once no session below the parent holds a lease, and
// admissions below the parent are refused DRAINING meanwhile and after.
func TestAScopedDrainDisposesADescendantResidentInAnotherProcess(t *testing.T) {
	ctx := testkit.Context(t)
	dsn := cluster.Database(t)
	home, homeStore, child := homeWithSettledChild(t, dsn)
	home.m.stopWakes(bg)

	away := newFixture(t, withStore(openPostgres(t, dsn, "away")), withTopLevel("elsewhere"))
	away.awaitListening()
	in, _ := session.InboxOf(homeStore)
	_, err := in.Admit(bg, child, durableMessage(t, "wait away", home.parent.ID(), home.parent.Session().Epoch()))
	require.NoError(t, err)
	away.gates.reached("away")

	require.NoError(t, home.m.DrainContinuableDescendants(ctx, []*parent.Handle{home.parent}))
	conn, err := pgx.Connect(bg, dsn)
	require.NoError(t, err)
	defer func() { require.NoError(t, conn.Close(ctx)) }()
	var owner *string
	var state string
	require.NoError(t, conn.QueryRow(bg, `SELECT owner, state FROM sessions WHERE id = $1`, child).Scan(&owner, &state))
	require.Nil(t, owner, "the drain returned after the other process released the child")
	require.Equal(t, "disposed", state)
	end := away.settled(child, 1)
	require.NotEqual(t, agent.Completed, end.StopReason, "the running turn was cancelled")
	require.Nil(t, away.activation(child), "disposed where it ran")
	_, err = home.m.Followup(ctx, home.parent, child, event.Text("late"), event.Source{Kind: "user"})
	require.ErrorIs(t, err, fault.Draining)
}

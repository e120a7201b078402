package manager

import (
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/pgstore"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// onBothStores runs test on a JSONL store opened with jsonlOptions and on
// a Postgres store; open returns another handle on the same store each
// time (another process's view, with its own leases), closed when the
// test ends.
func onBothStores(t *testing.T, jsonlOptions []session.Option, test func(t *testing.T, open func() session.Fenced)) {
	t.Run("jsonl", func(t *testing.T) {
		root := t.TempDir()
		options := append([]session.Option{session.WithLogger(slog.New(slog.DiscardHandler))}, jsonlOptions...)
		test(t, func() session.Fenced {
			s, err := session.OpenJSONL(root, options...)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, s.Close()) })
			return s
		})
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := cluster.Database(t)
		test(t, func() session.Fenced {
			s, err := pgstore.Open(bg, dsn, pgstore.WithTTL(time.Minute))
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, s.Close()) })
			return s
		})
	})
}

// storeWakes reports whether store's durable inbox wakes other processes.
func storeWakes(store session.Fenced) bool {
	in, ok := session.InboxOf(store)
	_, wakes := in.(session.Waker)
	return ok && wakes
}

// takeOver moves id's lease from the live session to another handle, as
// another process does once the lease expired: the live session's epoch
// is released behind its back and the other handle acquires a new one.
func takeOver(t *testing.T, store session.Fenced, live *session.Live, other session.Fenced) session.Epoch {
	t.Helper()
	require.NoError(t, store.Release(bg, live.ID(), live.Epoch()))
	epoch, err := other.Acquire(bg, live.ID())
	require.NoError(t, err)
	return epoch
}

// A child whose lease another holder took over mid-turn is stopped at
// once: its turn is reported failed naming FENCED, nothing more is
// written under the old epoch (not even its turn/end), its epoch ends as
// an error, and the manager forgets it; a follow-up is refused while the
// other holder has the lease (with a store that wakes, it is committed to
// the durable inbox instead and runs first once the lease is free) and
// cold-resumes the child under a fresh lease once it is free.
func TestAFencedChildStopsAndAFollowupResumesItUnderANewLease(t *testing.T) {
	ctx := testkit.Context(t)
	onBothStores(t, nil, func(t *testing.T, open func() session.Fenced) {
		store := open()
		f := newFixture(t, withStore(store))
		if storeWakes(store) {
			f.awaitListening() // a wake sent before the manager listens is heard only by a later sweep
		}
		child, live, before := f.heldAtGate("hold fence", "fence")

		other := open()
		epoch := takeOver(t, store, live, other)
		f.gates.open("fence") // the turn says "held": its write is fenced
		end := f.settled(child, 1)
		require.Equal(t, agent.Error, end.StopReason)
		require.Nil(t, f.activation(child), "the manager forgot the fenced activation")
		require.Contains(t, f.logs.String(), "actors: turn failed: the session's lease was fenced")
		require.Contains(t, f.logs.String(), "code=FENCED")

		log, err := other.Inspect(bg, child)
		require.NoError(t, err)
		require.Equal(t, len(before), len(log.Events), "nothing of the fenced turn reached the store")
		for _, e := range log.Events {
			require.NotContains(t, string(e.Data), "held")
		}

		_, err = f.m.Followup(ctx, f.parent, child, event.Text("while held"), event.Source{Kind: "user"})
		if storeWakes(store) {
			require.NoError(t, err, "committed to the durable inbox: the holder is woken to run it")
		} else {
			require.ErrorIs(t, err, fault.LeaseHeld, "the other holder still has the lease")
		}
		require.NoError(t, other.Release(bg, child, epoch))

		f.followup(f.parent, child, "again")
		end = f.settled(child, 2)
		if storeWakes(store) && !reflect.DeepEqual(end.LastAssistantMessage, event.Text("answer: again")) {
			end = f.settled(child, 3) // the wake ran the pending message in an epoch of its own
		}
		require.Equal(t, agent.Completed, end.StopReason)
		texts := strings.Join(f.userTexts(child), "|")
		require.Contains(t, texts, "again")
		if storeWakes(store) {
			require.Contains(t, texts, "while held|again", "the message the holder left pending runs first")
		}
		log, err = store.Inspect(bg, child)
		require.NoError(t, err)
		require.Contains(t, string(log.Events[len(log.Events)-5].Data)+string(log.Events[len(log.Events)-4].Data)+string(log.Events[len(log.Events)-3].Data), "answer: again")
	})
}

// stealer takes leases over as another process does once a holder stalled
// past its TTL: the lease is expired in the database and the other
// process's store acquires it, behind the holder's back (its store still
// believes it holds the lease until a renewal finds it lost).
type stealer struct {
	t     *testing.T
	conn  *pgx.Conn
	other session.Fenced
}

func newStealer(t *testing.T, dsn string) *stealer {
	conn, err := pgx.Connect(bg, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(bg) })
	other, err := pgstore.Open(bg, dsn, pgstore.WithOwner("other node"), pgstore.WithTTL(time.Minute))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, other.Close()) })
	return &stealer{t: t, conn: conn, other: other}
}

func (s *stealer) steal(id string) session.Epoch {
	s.t.Helper()
	_, err := s.conn.Exec(bg, `UPDATE sessions SET lease_until = now() - interval '1 second' WHERE id = $1`, id)
	require.NoError(s.t, err)
	epoch, err := s.other.Acquire(bg, id)
	require.NoError(s.t, err)
	return epoch
}

// stalledStore is the Postgres store of a node whose leases are about to
// be stolen; it renews only when the test calls Renew.
func stalledStore(t *testing.T, dsn string) session.Fenced {
	store, err := pgstore.Open(bg, dsn, pgstore.WithOwner("stalled node"), pgstore.WithTTL(time.Hour))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	return store
}

// A child whose lease a renewal finds lost stops at once, mid-turn and
// with nothing left to append: its turn is cancelled and reported failed
// naming FENCED (the turn waits at a gate nobody opens, so only the lost
// lease ends it), nothing more is written under the old epoch, its epoch
// ends as an error and the manager forgets it.
func TestAChildWhoseLeaseARenewalFindsLostStopsAtOnce(t *testing.T) {
	dsn := cluster.Database(t)
	store, thief := stalledStore(t, dsn), newStealer(t, dsn)
	f := newFixture(t, withStore(store))
	child, _, before := f.heldAtGate("wait renewal", "renewal")

	thief.steal(child)
	lost, err := store.Renew(bg)
	require.NoError(t, err)
	require.Equal(t, []string{child}, lost)
	end := f.settled(child, 1)
	require.Equal(t, agent.Error, end.StopReason)
	require.Nil(t, f.activation(child), "the manager forgot the fenced activation")
	require.Contains(t, f.logs.String(), "actors: turn failed: the session's lease was fenced")
	require.Contains(t, f.logs.String(), "code=FENCED")
	log, err := thief.other.Inspect(bg, child)
	require.NoError(t, err)
	require.Equal(t, before, log.Events, "nothing was written under the lost lease")
}

// A top-level agent whose lease a renewal finds lost (swept by another
// node after a stall) leaves the registry at once, so a later prompt
// resumes it under a fresh lease; its children then take follow-ups from
// that new epoch instead of refusing them as from a parent that is not
// the live one.
func TestATopLevelAgentWhoseLeaseIsLostLeavesTheRegistryAndResumesFresh(t *testing.T) {
	dsn := cluster.Database(t)
	store, thief := stalledStore(t, dsn), newStealer(t, dsn)
	f := newFixture(t, withStore(store))
	child := f.start(f.parent, "first")
	f.settled(child, 1)

	epoch := thief.steal("parent")
	_, err := store.Renew(bg)
	require.NoError(t, err)
	testkit.Receive(t, f.parent.Disposed(), "the fenced top-level agent's disposal")
	require.False(t, f.live("parent"), "the fenced top-level agent left the registry")
	require.NoError(t, thief.other.Release(bg, "parent", epoch)) // the sweeper gives it up

	resumed, err := f.rt.ResumeAgent(bg, "parent", parent.Spec{})
	require.NoError(t, err)
	f.followup(resumed, child, "again")
	require.Equal(t, agent.Completed, f.settled(child, 2).StopReason)
	require.Contains(t, f.userTexts(child), "again")
}

// A waiting child (idle, owning a running grandchild) whose lease a
// renewal finds lost is disposed at once, with nothing of its own left to
// end: the fence reaches the manager without a turn ending, the
// grandchild is torn down first, and the child's epoch ends as an error
// (the grandchild's gate never opens, so only the fence ends them).
func TestAnIdleWaitingChildWhoseLeaseIsLostIsDisposedAtOnce(t *testing.T) {
	ctx := testkit.Context(t)
	dsn := cluster.Database(t)
	store, thief := stalledStore(t, dsn), newStealer(t, dsn)
	f := newFixture(t, withStore(store))
	child, childAgent, grandchild := f.waitingChild(f.parent)
	_, err := f.rt.Sessions().Flush(ctx, childAgent.Session())
	require.NoError(t, err, "the child's turn is written (an append would renew the lease after the steal expired it)")

	thief.steal(child)
	lost, err := store.Renew(bg)
	require.NoError(t, err)
	require.Equal(t, []string{child}, lost)
	require.Equal(t, agent.Error, f.settled(child, 1).StopReason)
	f.settled(grandchild, 1)
	edges, _, _ := f.rec.snapshot()
	require.Equal(t, []string{"start " + child, "start " + grandchild, "end " + grandchild, "end " + child}, edges)
	require.Nil(t, f.activation(child))
	require.Nil(t, f.activation(grandchild))
}

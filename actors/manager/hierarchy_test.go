package manager

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// spawnedUnder reports whether child's actor is a protoactor child of
// p's: protoactor names an actor spawned by another's context
// "<the other's id>/<name>", and only such an actor is in the other's
// Children.
func spawnedUnder(child, p *parent.Handle) bool {
	return strings.HasPrefix(child.Activation().Ref().Id, p.Activation().Ref().Id+"/")
}

// forkOrSpawn prepares "fork" with p's completed turns as the seed and
// "spawn" with none.
func forkOrSpawn(_ context.Context, provider, _ string, p *parent.Handle) ([]session.Event, error) {
	if provider == "fork" {
		return completedPrefix(p), nil
	}
	return spawnOnly(context.Background(), provider, "", p)
}

// Every way a continuable child of a resident Activation gets an epoch
// spawns its actor under the parent's: a fresh start, a forked (seeded)
// start, a cold resume while the parent is resident, and a start under a
// parent that was cold-resumed itself. So the parent's stop stops it
// first, whoever stops the parent.
func TestAChildOfAResidentParentIsSpawnedUnderItsActor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, withPrepare(forkOrSpawn))
		f.openOnCleanup("c", "g", "fresh", "forked", "cold", "q", "resumed")
		_, c, g := f.waitingChild(f.parent) // c is resident, idle, with a completed turn
		registered := func(id string) *parent.Handle { return f.rt.Registry().Get(id) }

		fresh := registered(f.start(c, "wait fresh"))
		forked, err := f.m.StartContinuable(bg, StartSpec{Provider: "fork", Label: "fork",
			Request: Request{Prompt: event.Text("wait forked"), Parent: c}})
		require.NoError(t, err)
		require.NotNil(t, f.header(forked.ChildID).SeedLength, "the fork was seeded")
		settledChild := f.start(c, "silent")
		f.settled(settledChild, 1)
		require.Same(t, c, registered(c.ID()), "c stays resident while it owns g")
		f.followup(c, settledChild, "wait cold") // cold-resumes it while c is resident

		q := f.start(f.parent, "silent")
		f.settled(q, 1)
		f.followup(f.parent, q, "wait q") // q is resumed cold
		resumedParent := registered(q)
		resumedChild := registered(f.start(resumedParent, "wait resumed"))

		for name, pair := range map[string][2]*parent.Handle{
			"fresh":                       {registered(g), c},
			"fresh, a second":             {fresh, c},
			"forked":                      {registered(forked.ChildID), c},
			"cold-resumed, parent here":   {registered(settledChild), c},
			"started under a resumed one": {resumedChild, resumedParent},
		} {
			require.NotNil(t, pair[0], name)
			require.True(t, spawnedUnder(pair[0], pair[1]), "%s: %s is not under %s", name, pair[0].Activation().Ref().Id, pair[1].Activation().Ref().Id)
		}
	})
}

// A child of a top-level agent is the root of its own local forest: the
// top-level agent has no Activation, so it is outside the waiting graph,
// and its disposal leaves the child running; the child ends on its own,
// its end still emitted.
func TestAChildOfATopLevelAgentOutlivesItsDisposal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		f.openOnCleanup("c")
		child := f.start(f.parent, "wait c")
		f.gates.reached("c")
		childAgent := f.rt.Registry().Get(child)
		require.False(t, spawnedUnder(childAgent, f.parent))

		require.NoError(t, f.parent.Dispose(bg))
		synctest.Wait()
		require.Same(t, childAgent, f.rt.Registry().Get(child), "the child runs on")
		f.gates.open("c")
		require.Equal(t, agent.Completed, f.settled(child, 1).StopReason)
		f.requireNoActivation()
	})
}

// A child that settles while its owner waits for it settles the owner in
// turn, whose stop waits for the child's actor through its family and
// sends it nothing: protoactor unregisters a stopping actor's name before
// its Stopped, so a Stop sent then would be dead-lettered (and
// protoactor's dead-letter throttle would start a timer goroutine). The
// ends come child first.
func TestAnOwnedChildSettlingItsOwnerLeavesNoDeadLetter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		deadLetters := recordDeadLetters(f.rt)
		f.openOnCleanup("g")
		child, _, grandchild := f.waitingChild(f.parent)
		f.gates.open("g")
		f.settled(child, 1)
		synctest.Wait()
		require.Equal(t, []string{"start " + child, "start " + grandchild, "end " + grandchild, "end " + child}, f.edges())
		require.Empty(t, deadLetters())
	})
}

// A wake's takeover of a child whose parent is a resident Activation
// here resumes the child as that parent's, spawned under its actor, as a
// follow-up would.
func TestAWokenChildOfAResidentParentIsSpawnedUnderItsActor(t *testing.T) {
	store := openPostgres(t, cluster.Database(t), "home")
	f := newFixture(t, withStore(store))
	f.openOnCleanup("p", "woken")
	p := f.rt.Registry().Get(f.start(f.parent, "wait p"))
	f.gates.reached("p")
	child := f.start(p, "silent")
	f.settled(child, 1)
	f.awaitListening()

	in, _ := session.InboxOf(store)
	_, err := in.Admit(bg, child, durableMessage(t, "wait woken", p.ID(), p.Session().Epoch()))
	require.NoError(t, err)
	select {
	case <-f.gates.get(f.gates.at, "woken"):
	case <-time.After(endDeadline):
		t.Fatal("the woken child never ran the message its durable inbox got")
	}
	woken := f.rt.Registry().Get(child)
	require.NotNil(t, woken)
	require.True(t, spawnedUnder(woken, p), "%s is not under %s", woken.Activation().Ref().Id, p.Activation().Ref().Id)
}

// A follow-up from a parent whose own epoch is being resumed — live in
// the registry, its Activation not installed yet — makes the child that
// parent's own: spawned under its actor, so the parent is released only
// after the child, however the two resumes interleave. Before, the
// child became the root of a forest of its own and the parent settled
// and ended while the child still ran (the stress test's "child-first
// order broken").
func TestAChildResumedForAParentStillBeingResumedIsItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		f.openOnCleanup("p", "p2", "c")
		p := f.start(f.parent, "wait p")
		f.gates.reached("p")
		child := f.start(f.rt.Registry().Get(p), "silent")
		f.settled(child, 1)
		f.gates.open("p")
		f.settled(p, 1)

		accepted := make(chan error, 1)
		var once sync.Once
		f.rt.Registry().Subscribe(func(e parent.Event) {
			if e.Type != parent.EventCreated || e.AgentID != p {
				return
			}
			once.Do(func() { // p is live again; the manager has not installed its epoch
				go func() {
					_, err := f.m.Followup(bg, f.rt.Registry().Get(p), child, event.Text("wait c"), event.Source{Kind: "user"})
					accepted <- err
				}()
				synctest.Wait() // the child's resume went as far as it can before p's is installed
			})
		})
		f.followup(f.parent, p, "wait p2")
		require.NoError(t, <-accepted, "the follow-up to the child")
		f.gates.reached("c")
		synctest.Wait()
		resumedParent, resumedChild := f.rt.Registry().Get(p), f.rt.Registry().Get(child)
		require.NotNil(t, resumedParent, "the parent waits for its child")
		require.True(t, spawnedUnder(resumedChild, resumedParent), "%s is not under %s", resumedChild.Activation().Ref().Id, resumedParent.Activation().Ref().Id)

		f.gates.open("p2")
		synctest.Wait()
		require.Same(t, resumedParent, f.rt.Registry().Get(p), "the parent waits for its child")
		f.gates.open("c")
		f.settled(child, 2)
		f.settled(p, 2)
		edges := f.edges()
		require.Less(t, slices.Index(edges[4:], "end "+child), slices.Index(edges[4:], "end "+p), "child-first: %v", edges)
	})
}

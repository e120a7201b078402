package manager

import (
	"errors"
	"testing"
	"testing/synctest"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/stretchr/testify/require"
)

// These tests run in a synctest bubble: synctest.Wait stops them at the
// point where every goroutine waits, so an order is forced rather than
// hoped for, and a release that never comes is a bubble deadlock, not a
// hang. The fixture's cleanup checks that no message was dead-lettered to
// the manager, and TestMain that no goroutine leaked.

const releaseStepFn = "parent.(*Handle).releaseStep"

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// whenDisposed reports, once owner's agent/disposed is delivered, whether
// each of handles had completed its disposal by then (child-first). The
// bus order of agent/disposed across agents says nothing: an agent's
// event may be delivered by its turn's goroutine after its Dispose
// returned (see inbox.Emit), while Disposed is closed before it returns.
func (f *fixture) whenDisposed(owner string, handles ...*parent.Handle) <-chan []bool {
	seen := make(chan []bool, 1)
	f.rt.Registry().Subscribe(func(e parent.Event) {
		if e.Type == parent.EventDisposed && e.AgentID == owner {
			done := make([]bool, len(handles))
			for i, h := range handles {
				done[i] = isClosed(h.Disposed())
			}
			seen <- done
		}
	})
	return seen
}

// requireNoActivation checks, inside the actor, that no Activation is left.
func (f *fixture) requireNoActivation() {
	f.t.Helper()
	var activations int
	f.inActor(func() { activations = len(f.m.st.activations) })
	require.Zero(f.t, activations, "no Activation left")
}

// openOnCleanup opens the named gates, those still shut, before the
// fixture's cleanup closes the runtime: a test that failed half way then
// reports its failure instead of a bubble deadlock on a stuck turn.
func (f *fixture) openOnCleanup(names ...string) {
	f.t.Cleanup(func() {
		for _, name := range names {
			ch := f.gates.get(f.gates.ch, name)
			select {
			case <-ch:
			default:
				close(ch)
			}
		}
	})
}

func (f *fixture) edges() []string {
	edges, _, _ := f.rec.snapshot()
	return edges
}

// The actor of a child that owns a child stops behind the manager's back.
// Its Stopping opens the disposal of the child and of its own child in
// one step, failing the child's epoch; the child's actor was spawned
// under the child's, so protoactor stops that one first, and the child's
// release step starts only once its stuck grandchild was released.
func TestAnActorThatStopsUnexpectedlyIsDisposedChildFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		f.openOnCleanup("c", "g")
		disposed := f.recordDisposals()
		child := f.start(f.parent, "wait c")
		childAgent := f.rt.Registry().Get(child)
		grandchild := f.start(childAgent, "stuck g") // ignores the cancellation of its disposal
		childFirst := f.whenDisposed(child, f.rt.Registry().Get(grandchild))
		f.gates.reached("g")
		f.gates.open("c")
		require.NoError(t, childAgent.Activation().WhenIdle(bg)) // the child waits for its own child
		synctest.Wait()
		c := f.activation(child)
		require.NotNil(t, c)

		childAgent.Activation().Stop(agent.CancelCause{Kind: agent.CauseDisposed}) // the child's actor, not through the manager
		synctest.Wait()
		var open, childOpen, stillOwned bool
		var failure error
		f.inActor(func() {
			open, failure = c.disposal != nil, c.failure
			g := f.m.st.activations[grandchild]
			childOpen, stillOwned = g != nil && g.disposal != nil, hasOwned(c, grandchild)
		})
		require.True(t, open, "the Stopping opened the disposal")
		require.ErrorContains(t, failure, "agent actor stopped unexpectedly")
		require.True(t, childOpen, "and its child's, in the same step")
		require.True(t, stillOwned)
		require.False(t, isClosed(childAgent.Activation().Done()), "its actor waits for its child's")
		require.Zero(t, testkit.GoroutinesIn(releaseStepFn), "no release step started or parked: the grandchild's turn has not ended")
		require.Same(t, c, f.activation(child), "not released")
		require.Equal(t, []string{"start " + child, "start " + grandchild}, f.edges())
		require.Empty(t, disposed())

		f.gates.open("g")
		end := f.settled(child, 1)
		require.Equal(t, agent.Error, end.StopReason, "the unexpected stop fails the epoch")
		require.Nil(t, end.LastAssistantMessage)
		require.Equal(t, agent.Aborted, f.settled(grandchild, 1).StopReason)
		f.requireNoActivation()
		synctest.Wait()
		require.Equal(t, []string{"start " + child, "start " + grandchild, "end " + grandchild, "end " + child}, f.edges(),
			"each end once, child first")
		require.Equal(t, []bool{true}, <-childFirst, "the grandchild was disposed before the child")
		require.ElementsMatch(t, []string{grandchild, child}, disposed(), "each once")
		require.False(t, f.live(child))
		require.False(t, f.live(grandchild))
		require.Contains(t, f.logs.String(), "agent actor stopped unexpectedly")
	})
}

// An owner whose disposal opens while one of its children is being rolled
// back (its subagent/start was refused) counts that rollback among the
// children it waits for: its teardown starts only once the last of them,
// the rollback, settled, and it still finishes.
func TestAnOwnersTeardownWaitsForAChildsRollback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		f.openOnCleanup("c", "g", "r")
		disposed := f.recordDisposals()
		child := f.start(f.parent, "wait c")
		childAgent := f.rt.Registry().Get(child)
		grandchild := f.start(childAgent, "wait g")
		f.gates.reached("g")

		errRefused := errors.New("subagent/start refused")
		refusedID := make(chan string, 1)
		f.rec.setOnStart(func(info RunInfo) error {
			// Before refusing, give the child a turn that ignores
			// cancellation, so the rollback's handle disposal waits for it.
			msg := event.UserMessage{Content: event.Text("stuck r"), Source: event.Source{Kind: "user"}, Role: "user"}
			if _, err := f.rt.Registry().Get(info.ID).Post(bg, msg); err != nil {
				return err
			}
			f.gates.reached("r")
			refusedID <- info.ID
			return errRefused
		})
		started := make(chan error, 1)
		go func() {
			_, err := f.m.StartContinuable(bg, f.spec(childAgent, "never delivered"))
			started <- err
		}()
		refused := <-refusedID
		childFirst := f.whenDisposed(child, f.rt.Registry().Get(grandchild), f.rt.Registry().Get(refused))
		synctest.Wait() // the rollback opened the disposal; its handle disposal waits for the stuck turn
		var rollingBack, owned bool
		f.inActor(func() {
			r := f.m.st.activations[refused]
			rollingBack = r != nil && r.disposal != nil
			owned = hasOwned(f.m.st.activations[child], refused)
		})
		require.True(t, rollingBack)
		require.True(t, owned, "the refused child is still owned")

		drained := make(chan error, 1)
		go func() { drained <- f.drain(f.parent) }()
		synctest.Wait()
		require.Equal(t, []string{"start " + child, "start " + grandchild, "end " + grandchild}, f.edges(),
			"the other child settled")
		require.True(t, f.live(child), "the owner's teardown waits for the rollback")
		require.Zero(t, testkit.GoroutinesIn(releaseStepFn), "with no goroutine parked on it")
		require.Empty(t, drained)
		require.Empty(t, started)
		require.Equal(t, []string{grandchild}, disposed())

		f.gates.open("r")
		require.NoError(t, <-drained)
		require.ErrorIs(t, <-started, errRefused)
		require.Equal(t, agent.Aborted, f.settled(child, 1).StopReason)
		f.requireNoActivation()
		synctest.Wait()
		require.Equal(t, []string{"start " + child, "start " + grandchild, "end " + grandchild, "end " + child}, f.edges(),
			"no edge for the rolled-back child, one end each for the others, child first")
		require.Equal(t, []bool{true, true}, <-childFirst, "both children were disposed before the owner")
		require.ElementsMatch(t, []string{grandchild, refused, child}, disposed(), "each once")
		require.False(t, f.live(child))
		require.False(t, f.live(refused))
	})
}

// hasOwned reports whether owner owns the Activation of child id (actor
// only).
func hasOwned(owner *activation, id string) bool {
	for child := range owner.owned {
		if child.childID == id {
			return true
		}
	}
	return false
}

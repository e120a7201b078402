package manager

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/faultfs"
	"github.com/dsh-actors/dsh-actors/internal/testkit"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

func (f *fixture) drain(roots ...*parent.Handle) error {
	return f.m.DrainContinuableDescendants(testkit.Context(f.t), roots)
}

// abortedBy is the cancel cause recorded in the last turn/end of id's log.
func (f *fixture) lastTurnEnd(id string) string {
	events := f.events(id)
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == "turn/end" {
			return string(events[i].Data)
		}
	}
	return ""
}

// Unrelated forests are unaffected by a scoped drain.
func TestScopedDrainLeavesASiblingForestRunning(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	sibling := f.startTopLevel("sibling")
	target := f.start(f.parent, "wait t")
	grandchild := f.start(f.rt.Registry().Get(target), "wait g")
	other := f.start(sibling, "wait s")
	f.gates.reached("g")

	first := f.m.beginScopedDrain(bg, []*parent.Handle{f.parent})
	second := f.m.beginScopedDrain(bg, []*parent.Handle{f.parent})
	require.NoError(t, testkit.Receive(t, first, "the first scoped drain"))
	require.NoError(t, testkit.Receive(t, second, "the second, converging scoped drain"))
	require.False(t, f.live(target))
	require.False(t, f.live(grandchild))
	require.Contains(t, f.lastTurnEnd(target), `"kind":"aborted"`)
	require.Contains(t, f.lastTurnEnd(grandchild), `"kind":"aborted"`)
	edges, _, _ := f.rec.snapshot()
	require.Less(t, slices.Index(edges, "end "+grandchild), slices.Index(edges, "end "+target))

	require.True(t, f.live(other), "the sibling forest stays resident")
	f.followup(sibling, other, "still here")
	_, err := f.m.StartContinuable(ctx, f.spec(sibling, "new"))
	require.NoError(t, err)

	_, err = f.m.StartContinuable(ctx, f.spec(f.parent, "x"))
	require.ErrorIs(t, err, fault.Draining)
	require.EqualError(t, err, `continuable subagents below parent "parent" are draining; the operation was not admitted`)
	_, err = f.m.Followup(ctx, f.parent, target, event.Text("x"), event.Source{Kind: "user"})
	require.ErrorIs(t, err, fault.Draining, "the cut-off outlives the drain")
	f.gates.open("s")
}

// The cut-off ends when its exact root leaves the registry.
func TestScopedCutOffEndsWhenTheRootIsDisposed(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	require.NoError(t, f.drain(f.parent))
	_, err := f.m.StartContinuable(ctx, f.spec(f.parent, "x"))
	require.ErrorIs(t, err, fault.Draining)
	require.NoError(t, f.parent.Dispose(ctx))
	revived, err := f.rt.ResumeAgent(bg, "parent", parent.Spec{})
	require.NoError(t, err)
	f.inActor(func() {})
	_, err = f.m.StartContinuable(ctx, f.spec(revived, "x"))
	require.NoError(t, err)
}

// A continuable root keeps running; only its descendants go.
func TestScopedDrainRetainsAContinuableRoot(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	child := f.start(f.parent, "wait c")
	childAgent := f.rt.Registry().Get(child)
	grandchild := f.start(childAgent, "wait g")
	f.gates.reached("g")
	require.NoError(t, f.drain(childAgent))
	require.False(t, f.live(grandchild))
	require.Same(t, childAgent, f.rt.Registry().Get(child))
	_, err := f.m.StartContinuable(ctx, f.spec(childAgent, "x"))
	require.ErrorIs(t, err, fault.Draining)
	f.gates.open("c")
}

// Descendants are found by the ancestry captured at
// materialization, after an intermediate agent left the registry.
func TestScopedDrainFindsDescendantsBelowADepartedIntermediate(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	oneShot, err := f.rt.StartAgent(bg, parent.CreateSpec{Header: session.Header{ID: "one-shot", ParentSession: "parent"}})
	require.NoError(t, err)
	descendant := f.start(oneShot, "wait d")
	f.gates.reached("d")
	require.NoError(t, oneShot.Dispose(ctx))
	require.NoError(t, f.drain(f.parent))
	require.False(t, f.live(descendant))
	require.Contains(t, f.lastTurnEnd(descendant), `"kind":"aborted"`)
}

// Drain during materialization: the drain
// waits for the admitted materialization, which rolls back with DRAINING.
func TestScopedDrainAwaitsAnAdmittedMaterialization(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	hold := make(chan struct{})
	created := make(chan string, 1)
	var order []string
	var mu sync.Mutex
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	f.rt.Registry().Subscribe(func(e parent.Event) {
		switch {
		case e.Type == parent.EventCreated && e.AgentID != "parent":
			created <- e.AgentID
			<-hold
		case e.Type == parent.EventDisposed:
			note("disposed")
		}
	})
	started := make(chan error, 1)
	go func() {
		_, err := f.m.StartContinuable(ctx, f.spec(f.parent, "x"))
		started <- err
	}()
	child := testkit.Receive(t, created, "the child's agent/created")
	drained := f.m.beginScopedDrain(bg, []*parent.Handle{f.parent})
	f.inActor(func() {})
	select {
	case <-drained:
		t.Fatal("the drain resolved before the materialization settled")
	default:
	}
	close(hold)
	require.NoError(t, testkit.Receive(t, drained, "the scoped drain"))
	note("drain")
	require.ErrorIs(t, testkit.Receive(t, started, "the start the drain refused"), fault.Draining)
	require.Equal(t, []string{"disposed", "drain"}, underLock(&mu, func() []string { return slices.Clone(order) }))
	require.False(t, f.live(child))
}

// A stale root is ignored and does not close its id's live agent.
func TestScopedDrainIgnoresAStaleRoot(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	stale := f.startTopLevel("twin")
	require.NoError(t, stale.Dispose(ctx))
	live, err := f.rt.ResumeAgent(bg, "twin", parent.Spec{})
	require.NoError(t, err)
	require.NoError(t, f.drain(stale))
	_, err = f.m.StartContinuable(ctx, f.spec(live, "x"))
	require.NoError(t, err)
}

// Drain after materialization, before the prompt:
// the start rejects DRAINING, nothing reaches the inbox, no child is left.
func TestDrainInsideSubagentStartRejectsTheInitialPrompt(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	var enqueued int
	var mu sync.Mutex
	f.rt.Registry().Subscribe(func(e parent.Event) {
		if e.Type == inbox.Enqueue {
			mu.Lock()
			enqueued++
			mu.Unlock()
		}
	})
	var drained <-chan error
	f.rec.setOnStart(func(RunInfo) error {
		drained = f.m.beginScopedDrain(bg, []*parent.Handle{f.parent})
		return nil
	})
	_, err := f.m.StartContinuable(ctx, f.spec(f.parent, "x"))
	require.ErrorIs(t, err, fault.Draining)
	require.NoError(t, testkit.Receive(t, drained, "the scoped drain begun in the Started hook"))
	require.Equal(t, []*parent.Handle{f.parent}, f.rt.Registry().List())
	require.Zero(t, underLock(&mu, func() int { return enqueued }))
	edges, _, _ := f.rec.snapshot()
	require.Len(t, edges, 2, "start and its paired end")
}

// Follow-up admitted then drain: the
// follow-up resolves, is discarded by the teardown cancel, never logged,
// never replayed.
func TestAFollowupAdmittedBeforeADrainIsDiscardedNotReplayed(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	child := f.start(f.parent, "wait g")
	f.gates.reached("g")
	var mu sync.Mutex
	var order []string
	f.rt.Registry().Subscribe(func(e parent.Event) {
		if e.AgentID == child && (e.Type == inbox.Enqueue || e.Type == inbox.Discard) {
			mu.Lock()
			order = append(order, string(e.Type)+" "+e.MessageID)
			mu.Unlock()
		}
	})
	id := f.followup(f.parent, child, "discarded")
	require.NoError(t, f.drain(f.parent))
	require.Equal(t, []string{string(inbox.Enqueue) + " " + id, string(inbox.Discard) + " " + id}, underLock(&mu, func() []string { return slices.Clone(order) }))
	require.False(t, f.live(child))
	require.Equal(t, []string{"wait g"}, f.userTexts(child))
	require.NoError(t, f.parent.Dispose(ctx)) // end the cut-off
	revived, err := f.rt.ResumeAgent(bg, "parent", parent.Spec{})
	require.NoError(t, err)
	f.inActor(func() {})
	f.followup(revived, child, "later")
	f.settled(child, 2)
	require.Equal(t, []string{"wait g", "later"}, f.userTexts(child), "no replay")
}

// Parent replaced during cold resume: the final
// admission rechecks exact liveness; the message is never logged.
func TestColdResumeRechecksTheExactParent(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	child := f.start(f.parent, "child task")
	f.settled(child, 1)
	var replaced sync.Once
	f.rt.Registry().Subscribe(func(e parent.Event) {
		if e.Type == parent.EventCreated && e.AgentID == child {
			replaced.Do(func() {
				require.NoError(t, f.parent.Dispose(ctx))
				_, err := f.rt.ResumeAgent(bg, "parent", parent.Spec{})
				require.NoError(t, err)
			})
		}
	})
	_, err := f.m.Followup(ctx, f.parent, child, event.Text("never logged"), event.Source{Kind: "user"})
	require.ErrorIs(t, err, fault.Unauthorized)
	require.EqualError(t, err, `subagent "`+child+`" delivery requires the exact live parent agent`)
	require.False(t, f.live(child))
	require.Equal(t, []string{"child task"}, f.userTexts(child))
}

// A top-level parent disposed while a fresh child materializes.
func TestAParentDisposedDuringMaterializationIsUnauthorized(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	f.rt.Registry().Subscribe(func(e parent.Event) {
		if e.Type == parent.EventCreated && e.AgentID != "parent" {
			require.NoError(t, f.parent.Dispose(ctx))
		}
	})
	_, err := f.m.StartContinuable(ctx, f.spec(f.parent, "x"))
	require.ErrorIs(t, err, fault.Unauthorized)
	require.Zero(t, len(f.rt.Registry().List()))
}

// One drain over several roots: two unrelated top-level roots lose their
// whole forests child-first, and a root that is itself a continuable child
// of another root stays resident while its own descendants and its
// siblings go.
func TestScopedDrainOverSeveralRoots(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	other := f.startTopLevel("other")
	kept := f.start(f.parent, "wait k")
	keptAgent := f.rt.Registry().Get(kept)
	below := f.start(keptAgent, "wait b")
	sibling := f.start(f.parent, "wait s")
	nephew := f.start(f.rt.Registry().Get(sibling), "wait n")
	otherChild := f.start(other, "wait o")
	otherGrandchild := f.start(f.rt.Registry().Get(otherChild), "wait og")
	for _, g := range []string{"b", "n", "og"} {
		f.gates.reached(g)
	}

	require.NoError(t, f.drain(f.parent, keptAgent, other))

	for _, id := range []string{below, sibling, nephew, otherChild, otherGrandchild} {
		require.False(t, f.live(id), id)
	}
	require.Same(t, keptAgent, f.rt.Registry().Get(kept), "a root is never a target")
	edges, _, _ := f.rec.snapshot()
	require.Less(t, slices.Index(edges, "end "+nephew), slices.Index(edges, "end "+sibling))
	require.Less(t, slices.Index(edges, "end "+otherGrandchild), slices.Index(edges, "end "+otherChild))
	require.NotContains(t, edges, "end "+kept)
	_, err := f.m.StartContinuable(ctx, f.spec(keptAgent, "x"))
	require.ErrorIs(t, err, fault.Draining)
	f.gates.open("k")
}

// A cold resume authorized by a continuable parent's epoch that settles
// and is replaced by a new epoch of the same parent while the child is
// being rebuilt: the child is never published, so no epoch of it runs
// outside its parent's ownership, where the new parent epoch it does not
// pin could end before it (child-first broken). The follow-up is
// UNAUTHORIZED and never logged.
func TestAChildRebuiltForAParentEpochThatEndedIsNeverPublished(t *testing.T) {
	bounded := testkit.Context(t)
	var f *fixture
	var holdChild atomic.Value // the child id whose final checkpoint waits for gate "flush"
	holdChild.Store("")
	flushing := make(chan struct{}, 1)
	f = newFixture(t, withCheckpoint(func(ctx context.Context, live *session.Live) (bool, error) {
		if live.Header().ID == holdChild.Load() {
			flushing <- struct{}{}
			f.gates.wait(context.Background(), "flush")
		}
		return f.rt.Sessions().Flush(ctx, live)
	}))
	p := f.start(f.parent, "wait p")
	f.gates.reached("p")
	stale := f.rt.Registry().Get(p)
	child := f.start(stale, "first")
	f.settled(child, 1)
	holdChild.Store(child)
	var replaced sync.Once
	f.rt.Registry().Subscribe(func(e parent.Event) { // the child's agent exists, unpublished
		if e.Type == parent.EventCreated && e.AgentID == child {
			replaced.Do(func() {
				f.gates.open("p")
				f.settled(p, 1)
				f.followup(f.parent, p, "wait q")
				f.gates.reached("q")
			})
		}
	})
	result := make(chan error, 1)
	go func() {
		_, err := f.m.Followup(bounded, stale, child, event.Text("never logged"), event.Source{Kind: "user"})
		result <- err
	}()
	var err error
	select {
	case err = <-result:
	case <-flushing: // the rebuilt child was published and is being torn down
	}
	f.gates.open("q")
	f.settled(p, 2)
	f.gates.open("flush")
	if err == nil {
		err = testkit.Receive(t, result, "the follow-up from the stale parent")
	}
	require.ErrorIs(t, err, fault.Unauthorized)
	require.EqualError(t, err, `subagent "`+child+`" delivery requires the exact live parent agent`)
	edges, _, _ := f.rec.snapshot()
	require.Equal(t, []string{"start " + p, "start " + child, "end " + child, "end " + p, "start " + p, "end " + p}, edges)
	require.Equal(t, []string{"first"}, f.userTexts(child))
}

// newLeasedFixture is a fixture over a JSONL store of its own (leases
// and all, which the fixture's wrapped store does not take), with
// store options opts, and a second store over the same root, as another
// process would open it: the second is refused a session's lease while
// the fixture's store holds it and takes it once that store gave it up.
func newLeasedFixture(t *testing.T, opts ...session.Option) (*fixture, *session.JSONL) {
	t.Helper()
	root := t.TempDir()
	store, err := session.OpenJSONL(root, opts...)
	require.NoError(t, err)
	other, err := session.OpenJSONL(root)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, errors.Join(store.Close(), other.Close())) })
	return newFixture(t, withStore(store)), other
}

// requireLeasesHeld fails unless other is refused the lease of each id.
func requireLeasesHeld(t *testing.T, other *session.JSONL, ids ...string) {
	t.Helper()
	for _, id := range ids {
		_, err := other.Acquire(bg, id)
		require.ErrorIs(t, err, fault.LeaseHeld, "the lease of %s while its agent is live", id)
	}
}

// requireLeasesFree fails unless other takes (and gives back) the lease of
// each id.
func requireLeasesFree(t *testing.T, other *session.JSONL, ids ...string) {
	t.Helper()
	for _, id := range ids {
		epoch, err := other.Acquire(bg, id)
		require.NoError(t, err, "the lease of %s once its agent was drained", id)
		require.NoError(t, other.Release(bg, id, epoch))
	}
}

// A scoped drain returns only once every drained session's lease was given
// up, child first: another process takes each lease as soon as the drain
// returned.
func TestADrainReturnsOnceEveryDrainedLeaseIsGivenUp(t *testing.T) {
	f, other := newLeasedFixture(t)
	disposed := f.recordDisposals()
	child := f.start(f.parent, "wait c")
	grandchild := f.start(f.rt.Registry().Get(child), "wait g")
	f.gates.reached("c")
	f.gates.reached("g")
	requireLeasesHeld(t, other, child, grandchild)

	require.NoError(t, f.drain(f.parent))
	requireLeasesFree(t, other, grandchild, child)
	require.Equal(t, []string{grandchild, child}, disposed())
	requireLeasesHeld(t, other, f.parent.ID())
}

// When the disk fills while a forest is drained, the cancelled turns'
// turn/end cannot be written: each drained agent still ends (in error,
// DURABILITY_FAILED), child first, and gives its lease up before the
// drain returns, which reports the failures.
func TestADrainWhoseWritesFailStillReleasesEveryLeaseChildFirst(t *testing.T) {
	faults := faultfs.New(nil)
	f, other := newLeasedFixture(t, session.WithFS(faults))
	disposed := f.recordDisposals()
	child := f.start(f.parent, "wait c")
	grandchild := f.start(f.rt.Registry().Get(child), "wait g")
	f.gates.reached("c")
	f.gates.reached("g")
	requireLeasesHeld(t, other, child, grandchild)

	faults.SetFull(true)
	err := f.drain(f.parent)
	require.ErrorIs(t, err, fault.ActivationTeardownFailed)
	require.ErrorIs(t, err, fault.DurabilityFailed)
	requireLeasesFree(t, other, grandchild, child)
	require.Equal(t, []string{grandchild, child}, disposed())
	require.Equal(t, agent.Error, f.settled(grandchild, 1).StopReason)
	require.Equal(t, agent.Error, f.settled(child, 1).StopReason)
	edges, _, _ := f.rec.snapshot()
	require.Less(t, slices.Index(edges, "end "+grandchild), slices.Index(edges, "end "+child))
	faults.SetFull(false)
}

// Activations come out in creation order whether their orders lie close
// together (placed in one pass) or far apart (sorted).
func TestActivationsAreOrderedByCreation(t *testing.T) {
	for _, orders := range [][]uint64{{7, 3, 5, 4, 6}, {900, 2, 40_000, 17}, {1}, nil} {
		acts := make([]*activation, len(orders))
		for i, o := range orders {
			acts[i] = &activation{order: o}
		}
		inCreationOrder(acts)
		got := make([]uint64, len(acts))
		for i, a := range acts {
			got[i] = a.order
		}
		require.True(t, slices.IsSorted(got), "orders %v came out as %v", orders, got)
		require.ElementsMatch(t, orders, got, "every activation is kept")
	}
}

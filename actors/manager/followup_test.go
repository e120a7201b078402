package manager

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// Follow-ups to a running child queue in its one FIFO inbox.
func TestFollowupQueuesBehindTheOpenTurn(t *testing.T) {
	f := newFixture(t)
	child := f.start(f.parent, "wait g")
	f.gates.reached("g")
	agentBefore := f.rt.Registry().Get(child)
	first := f.followup(f.parent, child, "first follow-up")
	second := f.followup(f.parent, child, "second follow-up")
	require.NotEqual(t, first, second)
	require.Same(t, agentBefore, f.rt.Registry().Get(child))
	f.gates.open("g")
	f.settled(child, 1)
	require.Equal(t, []string{"wait g", "first follow-up", "second follow-up"}, f.userTexts(child))
}

// A settled child cold-resumes into a new Activation; its
// top-level parent is not pinned by it.
func TestFollowupColdResumesASettledChild(t *testing.T) {
	f := newFixture(t)
	child := f.start(f.parent, "child task")
	f.settled(child, 1)
	require.False(t, f.live(child))
	f.followup(f.parent, child, "continue please")
	f.settled(child, 2)
	require.Equal(t, []string{"child task", "continue please"}, f.userTexts(child))
	require.Equal(t, 1, f.count(child, vocab.TypeSubagentDescriptor))
	require.True(t, f.live("parent"), "§3.2 #24: a top-level parent is outside the waiting graph")
}

// Both epochs report the descriptor's provider even
// after it can no longer be prepared; starts and ends pair by run id.
func TestColdResumeDoesNotNeedTheProvider(t *testing.T) {
	bounded := testkit.Context(t)
	retired := false
	f := newFixture(t, withPrepare(func(ctx context.Context, provider, _ string, p *parent.Handle) ([]session.Event, error) {
		if retired {
			return nil, NoProvider(provider)
		}
		return nil, nil
	}))
	spec := f.spec(f.parent, "child task")
	spec.Provider = "retired"
	s, err := f.m.StartContinuable(bounded, spec)
	require.NoError(t, err)
	f.settled(s.ChildID, 1)
	retired = true
	f.followup(f.parent, s.ChildID, "after retirement")
	f.settled(s.ChildID, 2)
	_, starts, ends := f.rec.snapshot()
	require.Len(t, starts, 2)
	for i := range starts {
		require.Equal(t, s.ChildID, starts[i].ID)
		require.Equal(t, "retired", starts[i].Provider)
		require.True(t, starts[i].Local)
		require.Equal(t, starts[i].RunID, ends[i].RunID)
		require.Equal(t, starts[i].Provider, ends[i].Provider)
	}
	require.NotEqual(t, starts[0].RunID, starts[1].RunID)
	require.Equal(t, []string{"child task", "after retirement"}, f.userTexts(s.ChildID))
}

// A waiting child (idle, owning a live grandchild) is woken, not
// rebuilt; it stays until its grandchild was disposed.
func TestFollowupWakesAWaitingActivation(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	child, childAgent, grandchild := f.waitingChild(f.parent)
	f.followup(f.parent, child, "while waiting")
	require.NoError(t, childAgent.Activation().WhenIdle(ctx))
	f.inActor(func() {})
	require.Same(t, childAgent, f.rt.Registry().Get(child), "a waiting child stays resident")
	f.gates.open("g")
	f.settled(child, 1)
	edges, _, _ := f.rec.snapshot()
	require.Equal(t, []string{"start " + child, "start " + grandchild, "end " + grandchild, "end " + child}, edges)
	require.Equal(t, []string{"wait c", "while waiting"}, f.userTexts(child))
}

// Authority is the exact live direct parent.
func TestFollowupRequiresTheExactDirectParent(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	child := f.start(f.parent, "wait g")
	stranger := f.startTopLevel("stranger")
	_, err := f.m.Followup(ctx, stranger, child, event.Text("x"), event.Source{Kind: "user"})
	require.ErrorIs(t, err, fault.Unauthorized)
	require.EqualError(t, err, `subagent "`+child+`" belongs to another parent session`)

	stale := f.startTopLevel("twin")
	require.NoError(t, stale.Dispose(ctx))
	_, err = f.rt.ResumeAgent(bg, "twin", parent.Spec{})
	require.NoError(t, err)
	_, err = f.m.Followup(ctx, stale, child, event.Text("x"), event.Source{Kind: "user"})
	require.ErrorIs(t, err, fault.Unauthorized)
	require.EqualError(t, err, `subagent "`+child+`" delivery requires the exact live parent agent`)
	f.gates.open("g")
	f.settled(child, 1)
	_, err = f.m.Followup(ctx, stranger, child, event.Text("x"), event.Source{Kind: "user"})
	require.ErrorContains(t, err, "belongs to another parent session", "checked before rebuilding")
}

// A log without a continuation descriptor cannot be resumed.
func TestFollowupRejectsAChildWithoutADescriptor(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	oneShot, err := f.rt.StartAgent(bg, parent.CreateSpec{Header: session.Header{ID: "one-shot", ParentSession: "parent"}})
	require.NoError(t, err)
	require.NoError(t, oneShot.Dispose(ctx))
	_, err = f.m.Followup(ctx, f.parent, "one-shot", event.Text("x"), event.Source{Kind: "user"})
	require.ErrorIs(t, err, fault.NotResumable)
	require.ErrorContains(t, err, "no supported continuation state")
}

// A follow-up to an id no log holds is NOT_RESUMABLE.
func TestFollowupToAnUnknownIDIsNotResumable(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	_, err := f.m.Followup(ctx, f.parent, "nobody", event.Text("x"), event.Source{Kind: "user"})
	require.ErrorIs(t, err, fault.NotResumable)
	require.EqualError(t, err, `subagent "nobody" is unavailable`)
	require.ErrorIs(t, err, session.ErrNotFound)
}

// Follow-up vs final settlement: a follow-up sent
// the moment the child goes idle is always delivered and logged, whether it
// joined the closing epoch or cold-resumed a new one.
func TestFollowupRacingFinalSettlementIsDelivered(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	type result struct {
		id  string
		err error
	}
	results := make(chan result, 1)
	dequeued := make(chan string, 4)
	var once sync.Once
	var created atomic.Value
	f.rt.Registry().Subscribe(func(e parent.Event) {
		if e.Type == parent.EventCreated && e.AgentID != "parent" {
			created.CompareAndSwap(nil, e.AgentID)
		}
		if e.AgentID != created.Load() {
			return
		}
		switch {
		case e.Type == inbox.Dequeue:
			dequeued <- e.MessageID
		case e.Type == inbox.StatusChange && e.Status == inbox.Idle:
			once.Do(func() {
				go func() {
					id, err := f.m.Followup(ctx, f.parent, e.AgentID, event.Text("raced"), event.Source{Kind: "user"})
					results <- result{id, err}
				}()
			})
		}
	})
	s, err := f.m.StartContinuable(ctx, f.spec(f.parent, "child task"))
	require.NoError(t, err)
	r := testkit.Receive(t, results, "the follow-up raced against the final settlement")
	require.NoError(t, r.err)
	for id := range dequeued {
		if id == r.id {
			break
		}
	}
	f.settled(s.ChildID, f.rec.countStarts(s.ChildID))
	require.Equal(t, []string{"child task", "raced"}, f.userTexts(s.ChildID))
}

// A context done before admission delivers nothing.
func TestFollowupWithADoneContextDeliversNothing(t *testing.T) {
	f := newFixture(t)
	child := f.start(f.parent, "wait g")
	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err := f.m.Followup(ctx, f.parent, child, event.Text("cancelled"), event.Source{Kind: "user"})
	require.ErrorIs(t, err, context.Canceled)
	f.gates.open("g")
	f.settled(child, 1)
	_, err = f.m.Followup(ctx, f.parent, child, event.Text("cancelled"), event.Source{Kind: "user"})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, []string{"wait g"}, f.userTexts(child))
}

// Cancelling after acceptance neither cancels the turn nor
// disposes the child.
func TestFollowupContextEndingAfterAcceptanceChangesNothing(t *testing.T) {
	f := newFixture(t)
	child := f.start(f.parent, "child task")
	f.settled(child, 1)
	ctx, cancel := context.WithCancel(bg)
	_, err := f.m.Followup(ctx, f.parent, child, event.Text("survives"), event.Source{Kind: "user"})
	require.NoError(t, err)
	cancel()
	end := f.settled(child, 2)
	require.Equal(t, agent.Completed, end.StopReason)
	require.Equal(t, []string{"child task", "survives"}, f.userTexts(child))
}

// A live agent without an Activation is the registry's: the
// follow-up fails typed and the agent stays.
func TestFollowupAtTheRegistryCollisionBoundary(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	child := f.start(f.parent, "wait g")
	agentBefore := f.rt.Registry().Get(child)
	f.inActor(func() {
		a := f.m.st.activations[child]
		// Keep the settlement path away, as an opened disposal does: the
		// cut-off is set and the manager stops watching the child's actor,
		// so its later stop cannot reach a manager that has already halted.
		a.disposal = &disposal{done: make(chan struct{})}
		f.m.self.Unwatch(a.handle.Activation().Ref())
		f.m.forget(a)
	})
	_, err := f.m.Followup(ctx, f.parent, child, event.Text("x"), event.Source{Kind: "user"})
	require.ErrorIs(t, err, fault.NotResumable)
	require.Same(t, agentBefore, f.rt.Registry().Get(child))
	f.gates.open("g")
	require.NoError(t, agentBefore.Dispose(ctx))
}

// A follow-up the inbox refuses leaves no accepted id. (The
// child's inbox is closed from inside the manager's actor, so nothing else
// interleaves; the child's actor then stops and the manager tears the
// epoch down as failed.)
func TestRefusedDeliveryClearsTheAcceptedReservation(t *testing.T) {
	bounded := testkit.Context(t)
	f := newFixture(t)
	child := f.start(f.parent, "wait g")
	a := f.activation(child)
	var disposeErr, err error
	var before, after int
	f.inActor(func() {
		a.owned = map[*activation]struct{}{{gone: true}: {}} // only the actor's termination may end this epoch
		disposeErr = a.handle.Activation().Dispose(bounded)
		before = len(a.accepted)
		reply := make(chan outcome, 1)
		f.m.submit(&op{kind: opFollowup, ctx: bg, childID: child, parent: f.parent, a: a,
			content: event.Text("x"), source: event.Source{Kind: "user"}, reply: reply})
		f.performDecided()
		err = (<-reply).err
		after = len(a.accepted)
	})
	require.NoError(t, disposeErr)
	require.ErrorIs(t, err, fault.InboxClosed)
	require.Equal(t, before, after)
	require.Equal(t, agent.Error, f.settled(child, 1).StopReason)
	require.Contains(t, f.logs.String(), "agent actor stopped unexpectedly")
}

// A request without a parent never reaches the actor.
func TestRequestsWithoutAParentAreRejected(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	_, err := f.m.Followup(ctx, nil, "child", event.Text("x"), event.Source{Kind: "user"})
	require.ErrorIs(t, err, fault.Unauthorized)
	_, err = f.m.StartContinuable(ctx, StartSpec{Provider: "spawn", Label: "x"})
	require.ErrorIs(t, err, ErrNoParent)
	require.ErrorIs(t, err, fault.Unauthorized, "by code, as a nil parent handle")
}

// A follow-up queued behind another critical section of its child (the
// child's lock) is dropped with CANCELLED once its context ends, without
// waiting for that section; the section's release then runs nothing for
// it.
func TestAQueuedFollowupLeavesTheQueueWhenItsContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		child := f.start(f.parent, "wait g")
		holder := &op{kind: opFollowup, ctx: bg, childID: child, locked: true, reply: make(chan outcome, 1)}
		f.inActor(func() { f.m.st.locks[child] = &childLock{waiters: []*op{holder}} })
		ctx, cancel := context.WithCancel(bg)
		done := make(chan error, 1)
		go func() {
			_, err := f.m.Followup(ctx, f.parent, child, event.Text("late"), event.Source{Kind: "user"})
			done <- err
		}()
		synctest.Wait()
		require.Empty(t, done, "the follow-up waits for the lock")
		cancel()
		require.ErrorIs(t, <-done, fault.Cancelled)
		f.inActor(func() { f.m.unlock(holder) })
		f.gates.open("g")
		f.settled(child, 1)
		require.Equal(t, []string{"wait g"}, f.userTexts(child))
	})
}

// A stored top-level session (its header names no parent) is no one's
// continuable child: a follow-up to it is UNAUTHORIZED once its log was
// read, and nothing is rebuilt.
func TestAFollowupToATopLevelSessionIsUnauthorized(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	solo := f.startTopLevel("solo")
	require.NoError(t, solo.Dispose(ctx))
	_, err := f.m.Followup(ctx, f.parent, "solo", event.Text("x"), event.Source{Kind: "user"})
	require.ErrorIs(t, err, fault.Unauthorized)
	require.ErrorContains(t, err, "belongs to another parent session")
	require.Zero(t, f.starts("solo"))
}

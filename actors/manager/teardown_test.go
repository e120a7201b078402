package manager

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/faultfs"
	"github.com/dsh-actors/dsh-actors/internal/testkit"

	agentactor "github.com/dsh-actors/dsh-actors/actors/activation"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// childCheckpoint applies fn to every session but the top-level ones'.
func childCheckpoint(fn checkpointFunc, sessions func() *session.Sessions) checkpointFunc {
	return func(ctx context.Context, live *session.Live) (bool, error) {
		if live.Header().ParentSession == "" {
			return sessions().Flush(ctx, live)
		}
		return fn(ctx, live)
	}
}

// Flush false: DURABILITY_FAILED, ownership still
// released, the end edge says error with no message, and a warning is
// logged.
func TestUnconfirmedDurabilityStillReleasesTheActivation(t *testing.T) {
	var f *fixture
	f = newFixture(t, withCheckpoint(childCheckpoint(func(context.Context, *session.Live) (bool, error) {
		return false, nil
	}, func() *session.Sessions { return f.rt.Sessions() })))
	child := f.start(f.parent, "wait c")
	grandchild := f.start(f.rt.Registry().Get(child), "hi")
	end := f.settled(grandchild, 1)
	require.Equal(t, agent.Error, end.StopReason)
	require.Nil(t, end.LastAssistantMessage)
	require.False(t, f.live(grandchild))
	f.gates.open("c")
	f.settled(child, 1) // not pinned in waiting by the failed grandchild
	require.False(t, f.live(child))
	require.Contains(t, f.logs.String(), "required durability checkpoint has no registered listener")
	require.Contains(t, f.logs.String(), "activation teardown failed")
}

// Flush error: a failing store makes the final
// checkpoint fail with DURABILITY_FAILED; the child is still released.
func TestFailedDurabilityCheckpointStillReleasesTheActivation(t *testing.T) {
	f := newFixture(t)
	child := f.start(f.parent, "wait g")
	f.gates.reached("g")
	f.store.fail(child)
	f.gates.open("g")
	end := f.settled(child, 1)
	require.Equal(t, agent.Error, end.StopReason)
	require.False(t, f.live(child))
	require.Contains(t, f.logs.String(), "durability checkpoint failed")
	require.Contains(t, f.logs.String(), "disk full")
}

// The running turn is cancelled before the final checkpoint.
func TestCancelPrecedesTheFinalCheckpoint(t *testing.T) {
	bounded := testkit.Context(t)
	var f *fixture
	var mu sync.Mutex
	var turnClosedAtFlush []bool
	f = newFixture(t, withCheckpoint(childCheckpoint(func(ctx context.Context, live *session.Live) (bool, error) {
		events := live.Events()
		mu.Lock()
		turnClosedAtFlush = append(turnClosedAtFlush, events[len(events)-1].Type == "turn/end")
		mu.Unlock()
		return f.rt.Sessions().Flush(ctx, live)
	}, func() *session.Sessions { return f.rt.Sessions() })))
	child := f.start(f.parent, "wait g")
	f.gates.reached("g")
	require.NoError(t, f.m.Close(bounded))
	end := f.settled(child, 1)
	require.Equal(t, agent.Aborted, end.StopReason)
	require.Equal(t, []bool{true}, underLock(&mu, func() []bool { return slices.Clone(turnClosedAtFlush) }))
}

// Unloading the manager disposes every forest
// child-first; the sessions stay loadable.
func TestCloseDisposesEveryForestChildFirst(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	disposed := f.recordDisposals()
	child := f.start(f.parent, "wait c")
	grandchild := f.start(f.rt.Registry().Get(child), "wait g")
	f.gates.reached("g")
	require.NoError(t, f.m.Close(ctx))
	require.False(t, f.live(child))
	require.False(t, f.live(grandchild))
	require.Equal(t, []string{grandchild, child}, disposed())
	edges, _, _ := f.rec.snapshot()
	require.Equal(t, []string{"start " + child, "start " + grandchild, "end " + grandchild, "end " + child}, edges)
	log, err := f.store.Load(bg, child)
	require.NoError(t, err)
	require.Equal(t, child, log.Header.ID)
}

// After the manager-wide drain began nothing is admitted.
func TestNothingIsAdmittedOnceTheManagerDrains(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	child := f.start(f.parent, "wait c")
	childAgent := f.rt.Registry().Get(child)
	f.inActor(func() { f.m.st.draining = true })
	_, err := f.m.StartContinuable(ctx, f.spec(childAgent, "grandchild"))
	require.ErrorIs(t, err, fault.Draining)
	require.EqualError(t, err, "continuable subagents are draining; the operation was not admitted")
	_, err = f.m.Followup(ctx, f.parent, child, event.Text("x"), event.Source{Kind: "user"})
	require.ErrorIs(t, err, fault.Draining)
	require.NoError(t, f.m.Close(ctx))
	_, err = f.m.StartContinuable(ctx, f.spec(f.parent, "after close"))
	require.ErrorIs(t, err, fault.Draining)
}

// A handle-disposal failure fails the drain, is reported
// on the terminal edge, and the branch is still released.
func TestHandleDisposalFailureIsReportedAndReleased(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t, withCheckpoint(func(context.Context, *session.Live) (bool, error) { return true, nil }))
	child := f.start(f.parent, "wait g")
	f.gates.reached("g")
	f.store.fail(child)
	err := f.m.DrainContinuableDescendants(ctx, []*parent.Handle{f.parent})
	require.ErrorIs(t, err, fault.ActivationTeardownFailed)
	require.ErrorContains(t, err, "continuable subagent teardown failed for 1 scoped activation(s)")
	require.ErrorContains(t, err, "activation handle disposal failed")
	require.False(t, f.live(child))
	require.Equal(t, agent.Error, f.settled(child, 1).StopReason)
}

// A failing grandchild fails the drain after every branch
// settled, without pinning its parent.
func TestAFailingBranchDoesNotPinTheRest(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t, withCheckpoint(func(context.Context, *session.Live) (bool, error) { return true, nil }))
	child := f.start(f.parent, "wait c")
	grandchild := f.start(f.rt.Registry().Get(child), "wait g")
	f.gates.reached("g")
	f.store.fail(grandchild)
	err := f.m.Close(ctx)
	require.ErrorIs(t, err, fault.ActivationTeardownFailed)
	require.ErrorContains(t, err, `subagent "`+child+`" child teardown failed`)
	require.False(t, f.live(child))
	require.False(t, f.live(grandchild))
	_, err = f.store.Load(bg, child)
	require.NoError(t, err)
}

// A parent Activation closing while its child materializes:
// ACTIVATION_CLOSING after the handle transfer, rolled back.
func TestAClosingParentCannotTakeAChild(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	child := f.start(f.parent, "wait c")
	childAgent := f.rt.Registry().Get(child)
	f.inActor(func() {
		f.m.st.activations[child].disposal = &disposal{done: make(chan struct{})}
	})
	_, err := f.m.StartContinuable(ctx, f.spec(childAgent, "grandchild"))
	require.ErrorIs(t, err, fault.ActivationClosing)
	require.EqualError(t, err, `subagent parent "`+child+`" is being disposed; the child was not established`)
	require.Equal(t, 2, len(f.rt.Registry().List()))
	edges, _, _ := f.rec.snapshot()
	require.Equal(t, []string{"start " + child}, edges)
	f.inActor(func() { f.m.st.activations[child].disposal = nil })
	f.gates.open("c")
	f.settled(child, 1)
}

// Each epoch reports its own stop reason and output.
func TestEachEpochReportsItsOwnReasonAndOutput(t *testing.T) {
	f := newFixture(t)
	child := f.start(f.parent, "first")
	first := f.settled(child, 1)
	require.Equal(t, agent.Completed, first.StopReason)
	require.Equal(t, event.Text("answer: first"), first.LastAssistantMessage)
	f.followup(f.parent, child, "max-tokens")
	second := f.settled(child, 2)
	require.Equal(t, agent.MaxTokens, second.StopReason)
	require.Equal(t, event.Text("partial"), second.LastAssistantMessage)
	f.followup(f.parent, child, "silent")
	third := f.settled(child, 3)
	require.Equal(t, agent.Completed, third.StopReason)
	require.Nil(t, third.LastAssistantMessage, "no message of its own, none of an earlier epoch")
}

// A delivery discarded inside its own admission window
// opens no turn; the epoch settles by itself and reports completed.
func TestADeliveryDiscardedInItsAdmissionWindowSettles(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	f.rt.Registry().Subscribe(func(e parent.Event) {
		if e.Type == inbox.Enqueue && e.AgentID != "parent" {
			if h := f.rt.Registry().Get(e.AgentID); h != nil {
				h.Activation().Cancel(agent.CancelCause{Kind: agent.CauseUser}, false)
			}
		}
	})
	s, err := f.m.StartContinuable(ctx, f.spec(f.parent, "doomed"))
	require.NoError(t, err)
	end := f.settled(s.ChildID, 1)
	require.Equal(t, agent.Completed, end.StopReason)
	require.Nil(t, end.LastAssistantMessage)
	require.Empty(t, f.userTexts(s.ChildID))
}

// Older accepted ids discarded during a later admission window
// are released too.
func TestOlderIDsDiscardedInALaterAdmissionWindowAreReleased(t *testing.T) {
	f := newFixture(t)
	child := f.start(f.parent, "wait g")
	f.gates.reached("g")
	f.followup(f.parent, child, "older")
	require.Len(t, f.activation(child).accepted, 1)
	cancelOn := make(chan string, 1)
	f.rt.Registry().Subscribe(func(e parent.Event) {
		if e.Type == inbox.Enqueue && e.AgentID == child {
			select {
			case id := <-cancelOn:
				if id == e.AgentID {
					f.rt.Registry().Get(child).Activation().Cancel(agent.CancelCause{Kind: agent.CauseUser}, false)
				}
			default:
			}
		}
	})
	cancelOn <- child
	f.followup(f.parent, child, "later")
	f.settled(child, 1)
	require.Equal(t, []string{"wait g"}, f.userTexts(child))
}

// An accepted message still in the inbox keeps the Activation.
func TestAnAcceptedQueuedMessageKeepsTheActivation(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	var registeredAtEnqueue []bool
	f.rt.Registry().Subscribe(func(e parent.Event) {
		if e.Type == inbox.Enqueue && e.AgentID != "parent" {
			mu.Lock()
			registeredAtEnqueue = append(registeredAtEnqueue, f.live(e.AgentID))
			mu.Unlock()
		}
	})
	child := f.start(f.parent, "wait g")
	f.gates.reached("g")
	f.followup(f.parent, child, "queued")
	f.gates.open("g")
	f.settled(child, 1)
	require.NotContains(t, underLock(&mu, func() []bool { return slices.Clone(registeredAtEnqueue) }), false)
	texts := f.userTexts(child)
	require.Contains(t, texts, "queued")
	require.Equal(t, 1, f.rec.countStarts(child), "one epoch ran both")
}

func (r *recorder) countStarts(id string) int {
	_, starts, _ := r.snapshot()
	return len(slices.DeleteFunc(starts, func(s RunInfo) bool { return s.ID != id }))
}

// Closing the runtime drains the manager first; a teardown
// failure there is logged and the runtime still closes.
func TestRuntimeCloseDrainsTheManagerFirst(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t, withCheckpoint(func(context.Context, *session.Live) (bool, error) { return false, nil }))
	child := f.start(f.parent, "wait g")
	f.gates.reached("g")
	require.NoError(t, f.rt.Close(ctx))
	require.False(t, f.live(child))
	require.Equal(t, agent.Error, f.settled(child, 1).StopReason)
	require.Contains(t, f.logs.String(), "drain at runtime close")
	require.Contains(t, f.logs.String(), "required durability checkpoint has no registered listener")
}

// A Close cut short by its context (a child's turn ignores cancellation) is
// continued by the next Close, which waits for the open disposals, emits
// their end edges and stops the manager's actor and dispatcher.
func TestACloseCutShortByItsContextIsContinued(t *testing.T) {
	bounded := testkit.Context(t)
	f := newFixture(t)
	child := f.start(f.parent, "stuck s")
	f.gates.reached("s")
	ctx, cancel := context.WithCancel(bg)
	cancel()
	require.ErrorIs(t, f.m.Close(ctx), context.Canceled)
	f.gates.open("s")
	require.NoError(t, f.m.Close(bounded))
	_, _, ends := f.rec.snapshot()
	require.Len(t, ends, 1, "the open disposal finished before Close returned")
	require.Equal(t, child, ends[0].ID)
	require.False(t, f.live(child))
	select {
	case <-f.m.stopped:
	default:
		t.Fatal("the manager's actor still runs")
	}
}

// A child whose log fails on a full disk reports the follow-up it lost
// (an error line naming it), fails its epoch (DURABILITY_FAILED, end edge
// error) and, once the disk has room, is cold-resumed by the next
// follow-up in the same process.
func TestAChildWhoseLogFailedOnAFullDiskResumesOnceThereIsRoom(t *testing.T) {
	ctx := testkit.Context(t)
	faults := faultfs.New(nil)
	f := newFixture(t, WithFS(faults))
	child := f.start(f.parent, "first")
	f.settled(child, 1)

	faults.SetFull(true)
	// The cold resume appends its epoch boundary. When the full disk has
	// refused that before admission, the message is refused (nothing was
	// accepted); else it is accepted, then reported lost (claimed by a
	// turn: activation's lost tests) or discarded unrun (still queued)
	// when the failure comes. Either way it never reaches the log.
	_, err := f.m.Followup(ctx, f.parent, child, event.Text("lost"), event.Source{Kind: "user"})
	end := f.settled(child, 2)
	require.Equal(t, agent.Error, end.StopReason)
	if err != nil {
		require.ErrorIs(t, err, fault.DurabilityFailed)
		require.NotContains(t, f.logs.String(), agentactor.LostMessage)
	} else {
		require.Contains(t, f.logs.String(), "durability checkpoint failed")
	}
	require.Equal(t, []string{"first"}, f.userTexts(child))

	faults.SetFull(false)
	f.followup(f.parent, child, "again")
	require.Equal(t, agent.Completed, f.settled(child, 3).StopReason)
	require.Equal(t, []string{"first", "again"}, f.userTexts(child))
}

// A follow-up to a resident child whose log has already failed is refused
// at admission (DURABILITY_FAILED, naming the child), not accepted and
// then reported lost; once the child has settled and the disk has room,
// the next follow-up cold-resumes it.
func TestAFollowupToAChildWhoseLogFailedIsRefused(t *testing.T) {
	ctx := testkit.Context(t)
	faults := faultfs.New(nil)
	f := newFixture(t, WithFS(faults))
	child := f.start(f.parent, "first")
	f.settled(child, 1)

	f.followup(f.parent, child, "hold g")
	f.gates.reached("g")
	failTheHeldTurnsLog(t, f, faults, child)

	_, err := f.m.Followup(ctx, f.parent, child, event.Text("refused"), event.Source{Kind: "user"})
	require.ErrorIs(t, err, fault.DurabilityFailed)
	require.ErrorIs(t, err, session.ErrLogFailed)
	require.Contains(t, err.Error(), `subagent "`+child+`" cannot accept messages: its session log failed`)
	require.NotContains(t, f.logs.String(), agentactor.LostMessage, "no accepted message was lost: the refused one was never accepted")

	f.gates.open("g after")
	f.settled(child, 2)
	faults.SetFull(false)
	f.followup(f.parent, child, "again")
	require.Equal(t, agent.Completed, f.settled(child, 3).StopReason)
	require.Equal(t, []string{"first", "hold g", "again"}, f.userTexts(child))
}

// failTheHeldTurnsLog flushes child's log while its turn is held at gate
// "g", fills the disk, lets the turn write on to gate "g after" and sees
// the log fail.
func failTheHeldTurnsLog(t *testing.T, f *fixture, faults *faultfs.FS, child string) {
	t.Helper()
	live := f.rt.Sessions().Get(child)
	require.NotNil(t, live)
	_, err := f.rt.Sessions().Flush(testkit.Context(t), live)
	require.NoError(t, err)
	faults.SetFull(true)
	f.gates.open("g") // the turn says "held", which the full disk refuses
	f.gates.reached("g after")
	_, err = f.rt.Sessions().Flush(testkit.Context(t), live)
	require.ErrorIs(t, err, session.ErrLogFailed)
}

// Follow-ups accepted and queued behind a turn whose log then fails are
// discarded unrun by the log's failure hook, before any teardown opens:
// the epoch's end still counts them, so that the embedder knows they are
// lost.
func TestFollowupsDiscardedByALogFailureAreCounted(t *testing.T) {
	faults := faultfs.New(nil)
	f := newFixture(t, WithFS(faults))
	child := f.start(f.parent, "first")
	f.settled(child, 1)

	f.followup(f.parent, child, "hold g")
	f.gates.reached("g")
	f.followup(f.parent, child, "queued one")
	f.followup(f.parent, child, "queued two")
	failTheHeldTurnsLog(t, f, faults, child)
	f.gates.open("g after")

	end := f.settled(child, 2)
	require.Equal(t, agent.Error, end.StopReason)
	require.Equal(t, 2, end.DiscardedFollowups)
	faults.SetFull(false)
	require.Equal(t, []string{"first", "hold g"}, f.userTexts(child))
}

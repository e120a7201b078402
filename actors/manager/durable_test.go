package manager

import (
	"fmt"
	"sync"
	"testing"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// onDurableStores runs test on the JSONL store in its durable admission
// mode and on the Postgres store (see onBothStores).
func onDurableStores(t *testing.T, test func(t *testing.T, open func() session.Fenced)) {
	onBothStores(t, []session.Option{session.WithDurableAdmission()}, test)
}

// abandon ends the leases of the live sessions ids behind the runtime
// that holds them, as a process killed or paused past its lease leaves
// them: nothing is drained and nothing more is written.
func abandon(t *testing.T, f *fixture, store session.Fenced, ids ...string) {
	t.Helper()
	for _, id := range ids {
		live := f.rt.Sessions().Get(id)
		require.NotNil(t, live, id)
		require.NoError(t, store.Release(bg, id, live.Epoch()))
	}
}

// Follow-ups acknowledged by a process that then dies before their turns
// claim them are run after the restart, once each, in the order they were
// accepted and before a newer follow-up; the dead process's turn, if it
// ever wakes, is fenced.
func TestAcceptedFollowupsSurviveACrashAndRunOnceInOrder(t *testing.T) {
	ctx := testkit.Context(t)
	onDurableStores(t, func(t *testing.T, open func() session.Fenced) {
		first := open()
		crashed := newFixture(t, withStore(first))
		child := crashed.start(crashed.parent, "wait crash")
		crashed.gates.reached("crash")
		_, err := crashed.rt.Sessions().Flush(ctx, crashed.rt.Sessions().Get(child))
		require.NoError(t, err, "the prompt's turn is claimed in the log: the process dies mid-turn")
		one := crashed.followup(crashed.parent, child, "one")
		two := crashed.followup(crashed.parent, child, "two")
		require.NotEqual(t, one, two)
		abandon(t, crashed, first, child, "parent")

		restarted := newFixture(t, withStore(open()), resumingParent())
		restarted.followup(restarted.parent, child, "three")
		require.Equal(t, agent.Completed, restarted.settled(child, 1).StopReason)
		require.Equal(t, []string{"wait crash", "one", "two", "three"}, restarted.userTexts(child),
			"the claimed prompt once, then the accepted follow-ups in order, then the new one")
		pending, err := restarted.m.inbox.Pending(bg, child)
		require.NoError(t, err)
		require.Empty(t, pending)

		crashed.gates.open("crash") // the old process wakes: its next write is fenced
		require.Equal(t, agent.Error, crashed.settled(child, 1).StopReason)
		require.Equal(t, []string{"wait crash", "one", "two", "three"}, restarted.userTexts(child), "it wrote nothing")
	})
}

// Follow-ups racing a drain of their parent are each acknowledged or
// refused with DRAINING: an acknowledged one is run or counted discarded
// by the drain, and none is left for a later epoch to replay.
func TestFollowupsRacingADrainAreRefusedOrSettledNeverBoth(t *testing.T) {
	ctx := testkit.Context(t)
	onDurableStores(t, func(t *testing.T, open func() session.Fenced) {
		f := newFixture(t, withStore(open()))
		child := f.start(f.parent, "wait drain")
		f.gates.reached("drain")
		const n = 16
		var wg sync.WaitGroup
		acked := make(chan string, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id, err := f.m.Followup(ctx, f.parent, child, event.Text(fmt.Sprint("racer ", i)), event.Source{Kind: "user"})
				if err == nil {
					acked <- id
					return
				}
				require.True(t, fault.CodeOf(err) == fault.Draining || fault.CodeOf(err) == fault.ActivationClosing, "refused: %v", err)
			}()
			if i == n/2 {
				require.NoError(t, f.m.DrainContinuableDescendants(ctx, []*parent.Handle{f.parent}))
			}
		}
		testkit.Wait(t, &wg, "the racing follow-ups")
		close(acked)
		ran := map[string]bool{}
		for _, text := range f.userTexts(child) {
			ran[text] = true
		}
		end := f.settled(child, 1)
		count := 0
		for range acked {
			count++
		}
		require.LessOrEqual(t, end.DiscardedFollowups, count)
		pending, err := f.m.inbox.Pending(bg, child)
		require.NoError(t, err)
		require.Empty(t, pending, "nothing acknowledged is left to replay, nothing refused is pending")
	})
}

// A drain's cut-off is recorded in the durable inbox: an admission below
// the drained parent from another process (straight to the store, at the
// parent's live epoch) is refused with DRAINING until the parent leaves.
func TestADrainClosesAdmissionInTheStoreForOtherProcesses(t *testing.T) {
	ctx := testkit.Context(t)
	onDurableStores(t, func(t *testing.T, open func() session.Fenced) {
		store := open()
		f := newFixture(t, withStore(store))
		child := f.start(f.parent, "silent")
		f.settled(child, 1)
		epoch := f.parent.Session().Epoch()
		in, ok := session.InboxOf(store)
		require.True(t, ok)
		_, err := in.Admit(bg, child, durableMessage(t, "before", f.parent.ID(), epoch))
		require.NoError(t, err, "admission is open before the drain")
		require.NoError(t, f.m.DrainContinuableDescendants(ctx, []*parent.Handle{f.parent}))
		_, err = in.Admit(bg, child, durableMessage(t, "after", f.parent.ID(), epoch))
		require.ErrorIs(t, err, fault.Draining)
	})
}

func durableMessage(t *testing.T, id, from string, epoch session.Epoch) session.Admission {
	body, err := vocab.Encode(event.UserMessage{Role: event.RoleUser, ID: id, Content: event.Text(id), Source: event.Source{Kind: event.SourceUser}})
	require.NoError(t, err)
	return session.Admission{MessageID: id, From: from, FromEpoch: epoch, Body: body}
}

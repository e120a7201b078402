package manager

import (
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/stretchr/testify/require"
)

// remembered is the end WaitEpoch keeps for childID and whether the bus
// listener still watches its parent's id (read inside the actor).
func (f *fixture) remembered(childID, parentID string) (end RunEndInfo, ok, watched bool) {
	f.inActor(func() {
		rec := f.m.st.ends[childID]
		if ok = rec != nil; ok {
			end = rec.RunEndInfo
		}
		watched = f.m.endParents.has(parentID)
	})
	return end, ok, watched
}

// An epoch that ended before WaitEpoch was called is returned at once;
// the entry goes away when the child's parent is disposed, and WaitEpoch
// then answers ok false.
func TestWaitEpochReturnsAnEndedEpochUntilItsParentIsDisposed(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	child := f.start(f.parent, "hello")
	seen := f.settled(child, 1) // delivered after the end was remembered
	end, ok, err := f.m.WaitEpoch(ctx, child)
	require.NoError(t, err)
	require.True(t, ok, "the epoch ended before the call")
	require.Equal(t, seen, end)

	f.followup(f.parent, child, "again")
	seen = f.settled(child, 2)
	end, ok, err = f.m.WaitEpoch(ctx, child)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, seen, end, "the later epoch's end replaces the first")
	kept, ok, watched := f.remembered(child, "parent")
	require.True(t, ok)
	require.True(t, watched)
	require.Equal(t, seen, kept)

	require.NoError(t, f.parent.Dispose(ctx)) // its agent/disposed is posted before it returns
	_, ok, watched = f.remembered(child, "parent")
	require.False(t, ok, "the parent's disposal drops its children's ends")
	require.False(t, watched)
	end, ok, err = f.m.WaitEpoch(ctx, child)
	require.NoError(t, err)
	require.False(t, ok)
	require.Zero(t, end)
}

// A child whose parent was disposed while the epoch ran is not
// remembered: nothing can send to it through that parent.
func TestWaitEpochForgetsAnEpochThatOutlivedItsParent(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	child := f.start(f.parent, "wait go")
	f.gates.reached("go")
	require.NoError(t, f.parent.Dispose(ctx))
	f.gates.open("go")
	f.settled(child, 1)
	_, ok, watched := f.remembered(child, "parent")
	require.False(t, ok)
	require.False(t, watched)
}

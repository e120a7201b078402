package dsh

import (
	"context"
	"testing"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/subagent"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var bg = context.Background()

func open(t *testing.T, opts Options) *Runtime {
	t.Helper()
	rt, err := Open(opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	return rt
}

func TestOpenRegistersSpawnAndForkAndOwnsTheOneService(t *testing.T) {
	rt := open(t, Options{Dir: t.TempDir()})
	require.Equal(t, []string{subagent.SpawnName, subagent.ForkName}, rt.Subagents().List())
	_, err := subagent.New(rt.Actors(), rt.Query())
	require.ErrorIs(t, err, actors.ErrSubagentsInstalled, "a second service on the runtime is an error")
}

func TestSpawnSendAndListWithTheDefaults(t *testing.T) {
	rt := open(t, Options{Dir: t.TempDir()})
	p, err := rt.StartAgent(bg, "parent")
	require.NoError(t, err)
	childID, err := rt.Spawn(bg, p, "worker", agent.Text("reply hello"))
	require.NoError(t, err)
	_, err = rt.Send(bg, p, childID, agent.Text("reply again"))
	require.NoError(t, err)
	entries, err := rt.Children(bg, "parent")
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Equal(t, childID, entries[0].ID)
	require.Equal(t, "worker", entries[0].Label)
}

func TestMemoryRuntimeRefusesContinuableChildren(t *testing.T) {
	rt := open(t, Options{})
	p, err := rt.StartAgent(bg, "")
	require.NoError(t, err)
	_, err = rt.Spawn(bg, p, "x", agent.Text("hi"))
	require.ErrorIs(t, err, subagent.ErrPersistenceUnavailable)
}

// Two runtimes in one process share nothing: each has its own service,
// store and agents, and closing one leaves the other running.
func TestTwoRuntimesDoNotInterfere(t *testing.T) {
	a, b := open(t, Options{Dir: t.TempDir()}), open(t, Options{Dir: t.TempDir()})
	pa, err := a.StartAgent(bg, "parent")
	require.NoError(t, err)
	pb, err := b.StartAgent(bg, "parent")
	require.NoError(t, err, "the same id is free in the other runtime")
	childA, err := a.Spawn(bg, pa, "in a", agent.Text("reply a"))
	require.NoError(t, err)
	_, err = b.Send(bg, pb, childA, agent.Text("reply cross"))
	require.Error(t, err, "a child of runtime a is unknown to runtime b")
	require.Nil(t, b.Actors().Agent(childA))

	require.NoError(t, a.Close())
	_, err = a.StartAgent(bg, "")
	require.Error(t, err)
	childB, err := b.Spawn(bg, pb, "in b", agent.Text("reply b"))
	require.NoError(t, err, "closing a leaves b running")
	entries, err := b.Children(bg, "parent")
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Equal(t, childB, entries[0].ID)
}

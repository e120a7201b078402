package dsh

import (
	"context"
	"os"
	"testing"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/pgtest"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/subagent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cluster is the private PostgreSQL server of the Postgres store tests;
// pgtest.Main also checks for leaked goroutines.
var cluster *pgtest.Cluster

func TestMain(m *testing.M) {
	if isEmbedder() {
		os.Exit(serveEmbedder(os.Stdin, os.Stdout))
	}
	pgtest.Main(m, &cluster)
}

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
	require.Equal(t, []string{subagent.SpawnName, subagent.ForkName}, rt.subagents.List())
	_, err := subagent.New(rt.actors, rt.query)
	require.ErrorIs(t, err, actors.ErrSubagentsInstalled, "a second service on the runtime is an error")
	require.ErrorIs(t, err, fault.DuplicateProvider)
}

func TestSpawnSendAndListWithTheDefaults(t *testing.T) {
	rt := open(t, Options{Dir: t.TempDir()})
	p, err := rt.StartAgent(bg, "parent")
	require.NoError(t, err)
	childID, err := rt.Spawn(bg, p, "worker", event.Text("reply hello"))
	require.NoError(t, err)
	_, err = rt.Send(bg, p, childID, event.Text("reply again"))
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
	_, err = rt.Spawn(bg, p, "x", event.Text("hi"))
	require.ErrorIs(t, err, fault.PersistenceUnavailable)
}

// Two runtimes in one process share nothing: each has its own service,
// store and agents, and closing one leaves the other running.
func TestTwoRuntimesDoNotInterfere(t *testing.T) {
	a, b := open(t, Options{Dir: t.TempDir()}), open(t, Options{Dir: t.TempDir()})
	pa, err := a.StartAgent(bg, "parent")
	require.NoError(t, err)
	pb, err := b.StartAgent(bg, "parent")
	require.NoError(t, err, "the same id is free in the other runtime")
	childA, err := a.Spawn(bg, pa, "in a", event.Text("reply a"))
	require.NoError(t, err)
	_, err = b.Send(bg, pb, childA, event.Text("reply cross"))
	require.Error(t, err, "a child of runtime a is unknown to runtime b")
	require.Nil(t, b.actors.Registry().Get(childA))

	require.NoError(t, a.Close())
	_, err = a.StartAgent(bg, "")
	require.Error(t, err)
	childB, err := b.Spawn(bg, pb, "in b", event.Text("reply b"))
	require.NoError(t, err, "closing a leaves b running")
	entries, err := b.Children(bg, "parent")
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Equal(t, childB, entries[0].ID)
}

func TestWaitChildReturnsTheEpochsEndWithoutPolling(t *testing.T) {
	rt := open(t, Options{Dir: t.TempDir()})
	p, err := rt.StartAgent(bg, "parent")
	require.NoError(t, err)
	child, err := rt.Spawn(bg, p, "worker", event.Text("reply first"))
	require.NoError(t, err)
	end, ok, err := rt.WaitChild(bg, child)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "first", end.LastAssistantMessage[0].Text)

	again, ok, err := rt.WaitChild(bg, child)
	require.NoError(t, err)
	require.True(t, ok, "no epoch is resident: the last end is returned at once")
	require.Equal(t, end, again)

	_, err = rt.Send(bg, p, child, event.Text("reply second"))
	require.NoError(t, err)
	end, ok, err = rt.WaitChild(bg, child)
	require.NoError(t, err)
	require.True(t, ok, "the cold-resumed epoch")
	require.Equal(t, "second", end.LastAssistantMessage[0].Text)
	require.Zero(t, end.DiscardedFollowups)
}

// A turn can end before WaitChild is called (here: its subagent/end was
// seen first); WaitChild still returns that epoch's end, and the next
// epoch's end replaces it.
func TestWaitChildReturnsAnEpochThatEndedBeforeTheCall(t *testing.T) {
	rt := open(t, Options{Dir: t.TempDir()})
	p, err := rt.StartAgent(bg, "parent")
	require.NoError(t, err)
	ended := make(chan manager.RunEndInfo, 2)
	defer rt.subagents.Subscribe(func(e subagent.Event) {
		if end, ok := e.(*subagent.EndEvent); ok {
			ended <- end.RunEndInfo
		}
	})()
	child, err := rt.Spawn(bg, p, "worker", event.Text("reply first"))
	require.NoError(t, err)
	seen := <-ended
	end, ok, err := rt.WaitChild(bg, child)
	require.NoError(t, err)
	require.True(t, ok, "the epoch ended before the call")
	require.Equal(t, seen.LastAssistantMessage, end.LastAssistantMessage)
	require.Equal(t, "first", event.TextOf(end.LastAssistantMessage))

	_, err = rt.Send(bg, p, child, event.Text("reply second"))
	require.NoError(t, err)
	seen = <-ended
	end, ok, err = rt.WaitChild(bg, child)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, seen.LastAssistantMessage, end.LastAssistantMessage, "the later epoch's end replaces the first")
	require.Equal(t, "second", event.TextOf(end.LastAssistantMessage))
}

func TestWaitChildCancelledIsCancelled(t *testing.T) {
	rt := open(t, Options{Dir: t.TempDir()})
	p, err := rt.StartAgent(bg, "parent")
	require.NoError(t, err)
	child, err := rt.Spawn(bg, p, "forever", event.Text("sleep 1h"))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, _, err = rt.WaitChild(ctx, child)
	require.ErrorIs(t, err, fault.Cancelled)
	require.ErrorIs(t, err, context.Canceled)
}

// The end of an epoch says how many accepted follow-ups its teardown
// discarded unrun (they were never logged). The child's first turn is
// running (it waits for its cancellation) when both follow-ups are sent,
// and the end is read from a listener subscribed before the drain.
func TestEndCountsFollowupsATeardownDiscarded(t *testing.T) {
	turns := make(chan struct{}, 1)
	waitForCancel := agent.Func(func(ctx context.Context, _ agent.Host, _ event.UserMessage) (agent.StopReason, error) {
		turns <- struct{}{}
		<-ctx.Done()
		return agent.Aborted, nil
	})
	rt := open(t, Options{Dir: t.TempDir(), NewAgent: func(agent.Options) agent.Agent { return waitForCancel }})
	p, err := rt.StartAgent(bg, "parent")
	require.NoError(t, err)
	child, err := rt.Spawn(bg, p, "busy", event.Text("first"))
	require.NoError(t, err)
	testkit.Receive(t, turns, "the busy child's first turn")
	for _, text := range []string{"lost one", "lost two"} {
		_, err = rt.Send(bg, p, child, event.Text(text))
		require.NoError(t, err)
	}
	ends := make(chan manager.RunEndInfo, 1)
	cancel := rt.subagents.Subscribe(func(e subagent.Event) {
		if end, ok := e.(*subagent.EndEvent); ok && end.ID == child {
			ends <- end.RunEndInfo
		}
	})
	defer cancel()
	require.NoError(t, rt.subagents.DrainContinuableDescendants(bg, []*parent.Handle{p.h}))
	end := <-ends
	require.Equal(t, 2, end.DiscardedFollowups)
}

// Every caller-side cancellation is CANCELLED, whichever layer saw it
// (a cancelled StartContinuable returned a bare context.Canceled).
func TestCallerCancellationIsCancelledInEveryLayer(t *testing.T) {
	rt := open(t, Options{Dir: t.TempDir()})
	p, err := rt.StartAgent(bg, "parent")
	require.NoError(t, err)
	live, err := rt.Spawn(bg, p, "forever", event.Text("sleep 1h"))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(bg)
	cancel()
	calls := map[string]func() error{
		"spawn": func() error { _, err := rt.Spawn(ctx, p, "x", event.Text("reply hi")); return err },
		"start continuable": func() error {
			_, err := rt.subagents.StartContinuable(ctx, manager.StartSpec{Provider: subagent.SpawnName, Label: "x",
				Request: manager.Request{Prompt: event.Text("reply hi"), Parent: p.h}})
			return err
		},
		"send":         func() error { _, err := rt.Send(ctx, p, live, event.Text("reply hi")); return err },
		"wait child":   func() error { _, _, err := rt.WaitChild(ctx, live); return err },
		"children":     func() error { _, err := rt.Children(ctx, "parent"); return err },
		"start agent":  func() error { _, err := rt.StartAgent(ctx, ""); return err },
		"runtime send": func() error { _, err := rt.actors.Followup(ctx, "parent", event.Text("reply hi"), user); return err },
		"handle send":  func() error { _, err := p.h.Followup(ctx, event.Text("reply hi"), user); return err },
		"resume agent": func() error { _, err := rt.actors.ResumeAgent(ctx, "nobody", parent.Spec{}); return err },
	}
	check := func(what string, err error) {
		assert.ErrorIs(t, err, fault.Cancelled, what)
		assert.ErrorIs(t, err, context.Canceled, what)
	}
	for what, call := range calls {
		check(what, call())
	}
	check("drain descendants", rt.subagents.DrainContinuableDescendants(ctx, []*parent.Handle{p.h}))
	_, err = rt.Send(bg, p, live, event.Text("reply still open"))
	require.NoError(t, err, "a cancelled drain closed no admission")
}

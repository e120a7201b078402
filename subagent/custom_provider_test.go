package subagent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/dsh-actors/dsh-actors/subagent"
	"github.com/stretchr/testify/require"
)

// echoing is a provider written outside the package: it runs its one-shot
// children through spawn with the prompt told to echo, and seeds nothing
// for continuable ones.
type echoing struct{ spawn subagent.Provider }

func (echoing) Name() string                        { return "echoing" }
func (echoing) Capabilities() subagent.Capabilities { return subagent.Capabilities{DepthLimit: true} }
func (echoing) InheritsParentContext() bool         { return false }
func (p echoing) Start(ctx context.Context, req subagent.StartRequest) (*subagent.Run, error) {
	req.Prompt = event.Text("reply echo: " + event.TextOf(req.Prompt))
	return p.spawn.Start(ctx, req)
}
func (echoing) PrepareContinuable(context.Context, subagent.ContinuableRequest) (subagent.ContinuableSpec, error) {
	return subagent.ContinuableSpec{}, nil
}

func TestACustomProviderIsRegisteredListedUsedAndRemoved(t *testing.T) {
	ctx := context.Background()
	rt, svc, closeRuntime, err := openService(t.TempDir())
	require.NoError(t, err)
	defer func() { require.NoError(t, closeRuntime()) }()
	remove, err := svc.RegisterProvider(echoing{spawn: svc.GetProvider(subagent.SpawnName)})
	require.NoError(t, err)
	require.Equal(t, []string{subagent.SpawnName, subagent.ForkName, "echoing"}, svc.List())
	p, err := rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: "parent"}})
	require.NoError(t, err)

	depth, err := subagent.DelegationDepth(p)
	require.NoError(t, err)
	require.Zero(t, depth)
	zero := 0
	_, err = subagent.ChildDepth(p, &zero)
	require.ErrorIs(t, err, fault.DepthExceeded)

	run, err := svc.Start(ctx, "echoing", subagent.StartRequest{Prompt: event.Text("hi"), Parent: p})
	require.NoError(t, err)
	require.NotNil(t, run.LocalAgent())
	require.Equal(t, run.LocalAgent().ID(), run.ID())
	childDepth, err := subagent.DelegationDepth(run.LocalAgent())
	require.NoError(t, err)
	require.Equal(t, 1, childDepth)
	res, err := run.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, subagent.Result{Output: event.Text("echo: hi"), StopReason: agent.Completed}, res)
	require.NoError(t, run.Dispose(ctx))

	started, err := svc.StartContinuable(ctx, manager.StartSpec{Provider: "echoing", Label: "kept",
		Request: manager.Request{Prompt: event.Text("reply kept"), Parent: p}})
	require.NoError(t, err)
	require.True(t, strings.TrimSpace(started.ChildID) != "")

	kept, err := svc.Start(ctx, "echoing", subagent.StartRequest{Prompt: event.Text("after"), Parent: p})
	require.NoError(t, err)
	remove()
	require.Nil(t, svc.GetProvider("echoing"))
	require.Equal(t, []string{subagent.SpawnName, subagent.ForkName}, svc.List())
	res, err = kept.Result(ctx)
	require.NoError(t, err, "a run returned before the removal goes on")
	require.Equal(t, subagent.Result{Output: event.Text("echo: after"), StopReason: agent.Completed}, res)
	require.NoError(t, kept.Dispose(ctx))
	_, err = svc.Start(ctx, "echoing", subagent.StartRequest{Prompt: event.Text("hi"), Parent: p})
	require.ErrorIs(t, err, fault.NoProvider)
	end, ok, err := svc.WaitChild(ctx, started.ChildID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "echoing", end.Provider)
	require.Equal(t, event.Text("kept"), end.LastAssistantMessage)
}

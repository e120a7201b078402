package dsh

import (
	"context"
	"testing"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/dsh-actors/dsh-actors/subagent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var user = event.Source{Kind: "user"}

// Once shutdown began, nothing is admitted by any layer, and every layer
// answers the same closed error: a hook that runs first in Close (before
// the subagent manager's own drain) tries every way in.
func TestNothingIsAcceptedOnceShutdownBegins(t *testing.T) {
	rt, err := actors.New(actors.Options{Root: t.TempDir()})
	require.NoError(t, err)
	var (
		svc   *subagent.Service
		p     *parent.Handle
		child string
		tries map[string]error
	)
	rt.BeforeClose(func(ctx context.Context) error {
		tries = map[string]error{}
		_, tries["subagent follow-up to a running child"] = svc.Followup(ctx, p, child, event.Text("reply late"), user)
		_, tries["follow-up on the child's handle"] = rt.Registry().Get(child).Followup(ctx, event.Text("reply late"), user)
		_, tries["follow-up on the parent's handle"] = p.Followup(ctx, event.Text("reply late"), user)
		_, tries["runtime follow-up"] = rt.Followup(ctx, p.ID(), event.Text("reply late"), user)
		_, tries["start agent"] = rt.StartAgent(ctx, parent.CreateSpec{})
		_, tries["start continuable"] = svc.StartContinuable(ctx, manager.StartSpec{Provider: subagent.SpawnName, Label: "late",
			Request: manager.Request{Prompt: event.Text("reply late"), Parent: p}})
		_, tries["list children"] = svc.ListChildren(ctx, p.ID())
		return nil
	})
	svc, err = subagent.New(rt, query.New(rt.Sessions()))
	require.NoError(t, err)
	_, err = svc.RegisterProvider(subagent.NewSpawn(rt))
	require.NoError(t, err)
	p, err = rt.StartAgent(bg, parent.CreateSpec{Header: session.Header{ID: "parent"}})
	require.NoError(t, err)
	started, err := svc.StartContinuable(bg, manager.StartSpec{Provider: subagent.SpawnName, Label: "busy",
		Request: manager.Request{Prompt: event.Text("sleep 1h"), Parent: p}})
	require.NoError(t, err)
	child = started.ChildID

	require.NoError(t, rt.Close(bg))
	require.Len(t, tries, 7)
	for what, err := range tries {
		assert.ErrorIs(t, err, fault.Closed, what)
	}
}

// ends records the subagent/end events of rt's service.
func ends(rt *Runtime) <-chan *subagent.EndEvent {
	ch := make(chan *subagent.EndEvent, 16)
	rt.subagents.Subscribe(func(ev subagent.Event) {
		if end, ok := ev.(*subagent.EndEvent); ok {
			ch <- end
		}
	})
	return ch
}

func TestShutdownLetsRunningTurnsFinishThenDisposes(t *testing.T) {
	rt := open(t, Options{Dir: t.TempDir()})
	ended := ends(rt)
	p, err := rt.StartAgent(bg, "parent")
	require.NoError(t, err)
	child, err := rt.Spawn(bg, p, "slow", event.Text("sleep 20ms\nreply finished"))
	require.NoError(t, err)

	require.NoError(t, rt.Shutdown(bg))
	end := <-ended
	require.Equal(t, child, end.ID)
	require.Equal(t, agent.Completed, end.StopReason, "the running turn ran to its end")
	require.Equal(t, "finished", end.LastAssistantMessage[0].Text)
	_, err = rt.StartAgent(bg, "")
	require.ErrorIs(t, err, fault.Closed)
	require.NoError(t, rt.Close(), "Close after Shutdown is a no-op")
}

func TestShutdownCutShortLeavesTurnsRunningUntilClose(t *testing.T) {
	rt := open(t, Options{Dir: t.TempDir()})
	ended := ends(rt)
	p, err := rt.StartAgent(bg, "parent")
	require.NoError(t, err)
	child, err := rt.Spawn(bg, p, "forever", event.Text("sleep 1h"))
	require.NoError(t, err)
	cut, cancel := context.WithCancel(bg)
	cancel()

	require.ErrorIs(t, rt.Shutdown(cut), context.Canceled)
	_, err = rt.Send(bg, p, child, event.Text("reply late"))
	require.ErrorIs(t, err, fault.Closed, "admission stopped even though Shutdown was cut short")
	require.NotNil(t, rt.actors.Registry().Get(child), "the running turn was left running")

	require.NoError(t, rt.Close())
	end := <-ended
	require.Equal(t, child, end.ID)
	require.Nil(t, rt.actors.Registry().Get(child), "Close ended the child (its turn cancelled, or its prompt discarded unrun)")
}

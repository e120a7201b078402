package dsh

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/stretchr/testify/require"
)

// A turn waits for and lists its own children through agent.Host; another
// agent's child is UNAUTHORIZED to wait for, and not in its list.
func TestHostWaitsForAndListsOnlyItsOwnChildren(t *testing.T) {
	type seen struct {
		end      agent.ChildEnd
		children []agent.Child
		err      error
	}
	results := make(chan seen, 2)
	inspect := agent.Func(func(ctx context.Context, h agent.Host, msg event.UserMessage) (agent.StopReason, error) {
		var s seen
		s.end, _, s.err = h.Subagents().Wait(ctx, strings.TrimPrefix(event.TextOf(msg.Content), "wait "))
		if s.err == nil {
			s.children, s.err = h.Subagents().Children(ctx)
		}
		results <- s
		return agent.Completed, nil
	})
	newAgent := func(opts agent.Options) agent.Agent {
		if opts.ParentSession == "" {
			return inspect
		}
		return agent.Scripted(opts)
	}
	rt := open(t, Options{Dir: t.TempDir(), NewAgent: newAgent})
	owner, err := rt.StartAgent(bg, "owner")
	require.NoError(t, err)
	_, err = rt.StartAgent(bg, "stranger")
	require.NoError(t, err)
	child, err := rt.Spawn(bg, owner, "worker", event.Text("reply done"))
	require.NoError(t, err)

	_, err = rt.Prompt(bg, "owner", "wait "+child)
	require.NoError(t, err)
	got := receive(t, results, "the owner's turn")
	require.NoError(t, got.err)
	require.Equal(t, agent.Completed, got.end.StopReason)
	require.Equal(t, "done", got.end.LastAssistantText())
	require.Equal(t, []agent.Child{{ID: child, Label: "worker", Status: "complete"}}, got.children)

	_, err = rt.Prompt(bg, "stranger", "wait "+child)
	require.NoError(t, err)
	got = receive(t, results, "the stranger's turn")
	require.ErrorIs(t, got.err, fault.Unauthorized)
	require.ErrorContains(t, got.err, `"stranger" is not the direct parent of "`+child+`"`)
}

// receive is the next value of ch, failing the test naming what after a
// minute.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("waited a minute for %s", what)
		var zero T
		return zero
	}
}

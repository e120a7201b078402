package dsh

import (
	"context"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/stretchr/testify/require"
)

// A stored child is rebuilt by the factory of the route its descriptor
// names: a runtime whose factories build that route resumes it with that
// agent; one that builds no factory for it refuses the Send with
// NOT_RESUMABLE naming the route, and never answers with another agent.
func TestColdResumeBuildsTheDescriptorsRouteOrRefusesIt(t *testing.T) {
	dir := t.TempDir()
	shout := Options{Dir: dir, Provider: "acme", Model: "m1",
		NewAgent: TextAgent(func(_ context.Context, prompt string) (string, error) { return strings.ToUpper(prompt), nil })}
	first := open(t, shout)
	p, err := first.StartAgent(bg, "parent")
	require.NoError(t, err)
	childID, err := first.Spawn(bg, p, "shouter", event.Text("hello"))
	require.NoError(t, err)
	end, ok, err := first.WaitChild(bg, childID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "HELLO", event.TextOf(end.LastAssistantMessage))
	require.NoError(t, first.Close())

	scriptedOnly := open(t, Options{Dir: dir})
	p, err = scriptedOnly.ResumeAgent(bg, "parent")
	require.NoError(t, err)
	_, err = scriptedOnly.Send(bg, p, childID, event.Text("reply echo"))
	require.ErrorIs(t, err, fault.NotResumable)
	require.Equal(t, fault.NotResumable, fault.CodeOf(err))
	require.ErrorContains(t, err, `"acme/m1"`)
	require.NoError(t, scriptedOnly.Close())

	again := open(t, shout)
	p, err = again.ResumeAgent(bg, "parent")
	require.NoError(t, err)
	_, err = again.Send(bg, p, childID, event.Text("again"))
	require.NoError(t, err)
	end, ok, err = again.WaitChild(bg, childID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "AGAIN", event.TextOf(end.LastAssistantMessage))
}

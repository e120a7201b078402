package modelagent_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
	"github.com/dsh-actors/dsh-actors/modelagent"
	"github.com/dsh-actors/dsh-actors/subagent"
)

// TestAPersonaReplacesTheSystemPrompt: a child started with a persona is
// sent the persona as its system prompt, and again after it settled and
// was resumed from its log by a follow-up.
func TestAPersonaReplacesTheSystemPrompt(t *testing.T) {
	client := llmtest.NewClient(llmtest.Reply(llmtest.Say("arr")), llmtest.Reply(llmtest.Say("arr again")))
	r := newRigWith(t, client, modelagent.Config{})
	child := r.child(t, "captain", manager.Request{Prompt: event.Text("speak"), Persona: "PIRATE-PERSONA"})
	parentHandle := r.rt.Registry().Get("captain")
	require.NotNil(t, parentHandle)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.Eventually(t, func() bool { return r.rt.Registry().Get(child.ID()) == nil }, 20*time.Second, time.Millisecond,
		"waiting for the settled child %s to be released", child.ID())
	_, err := r.service.Followup(ctx, parentHandle, child.ID(), event.Text("again"), event.Source{Kind: event.SourceCoordinator, SenderSessionID: "captain"})
	require.NoError(t, err)
	resumed := r.rt.Registry().Get(child.ID())
	if resumed != nil {
		require.NoError(t, resumed.Activation().WhenIdle(ctx), "waiting for the resumed child")
	}
	require.Eventually(t, func() bool { return len(client.Requests()) == 2 }, 20*time.Second, time.Millisecond,
		"waiting for the resumed child's model call")

	for i, req := range client.Requests() {
		require.Equal(t, "PIRATE-PERSONA", req.System, "request %d", i)
	}
	require.Contains(t, ofType(events(t, child.Session()), "request/header")[0].Raw, `"system":"PIRATE-PERSONA"`)
}

// TestAOneShotChildGetsItsPersonaAndToolFilter: the in-process providers
// take a one-shot persona and tool filter and the model agent applies
// them.
func TestAOneShotChildGetsItsPersonaAndToolFilter(t *testing.T) {
	client := llmtest.NewClient(llmtest.Reply(llmtest.Say("aye")))
	r := newRigWith(t, client, modelagent.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	captain, err := r.rt.StartAgent(ctx, parentSpec("one-shot-captain"))
	require.NoError(t, err)
	run, err := r.service.Start(ctx, subagent.ForkName, subagent.StartRequest{Prompt: event.Text("speak"), Parent: captain,
		Persona: "PIRATE-PERSONA", ToolFilter: &event.ToolFilter{Allow: []string{"list_agents"}}})
	require.NoError(t, err)
	result, err := run.Result(ctx)
	require.NoError(t, err)
	require.NoError(t, run.Dispose(ctx))
	require.Equal(t, "aye", event.TextOf(result.Output))
	reqs := client.Requests()
	require.Len(t, reqs, 1)
	require.Equal(t, "PIRATE-PERSONA", reqs[0].System)
	require.Equal(t, []string{"list_agents"}, toolNames(reqs[0].Tools))
}

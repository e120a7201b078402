package dsh_test

import (
	"context"
	"fmt"
	"os"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/modelagent"
	"github.com/dsh-actors/dsh-actors/modelagent/modelagenttest"
)

// Run the model agent against a mock model: the model calls list_agents,
// reads its result and answers. The mock is an OpenAI-compatible
// chat-completions server on loopback that streams the two scripted
// responses, so the example needs no key and no network.
func Example_modelAgent() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-modelagent-*")
	defer os.RemoveAll(dir)

	listAgents := modelagenttest.Call{ID: "call-1", Name: modelagent.ToolListAgents, Args: []string{"{}"}}
	model := modelagenttest.NewServer(
		modelagenttest.CallTools(listAgents),
		modelagenttest.Say("You have no subagents yet."),
	)
	defer model.Close()
	agents, err := modelagent.New(modelagent.Config{BaseURL: model.URL, APIKey: "test-key", Model: "scripted-model"})
	if err != nil {
		fmt.Println(err)
		return
	}
	rt, _ := dsh.Open(dsh.Options{Dir: dir, ModelAgents: agents})
	defer rt.Close()

	a, _ := rt.StartAgent(ctx, "assistant")
	_, _ = rt.Prompt(ctx, "assistant", "what are my subagents doing?")
	_ = a.WhenIdle(ctx)
	conversation, _ := a.Conversation()
	for _, e := range conversation {
		fmt.Println(e.Role)
	}
	reply, _ := a.LastReply()
	fmt.Println(reply)
	// Output:
	// user
	// assistant
	// tool
	// assistant
	// You have no subagents yet.
}

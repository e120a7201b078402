package dsh_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

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
	_ = a.Activation().WhenIdle(ctx)
	for _, e := range a.Session().Events() {
		if strings.HasSuffix(e.Type, "/chunk") {
			continue // the streamed deltas the messages cite
		}
		fmt.Println(e.Type)
	}
	events := a.Session().Events()
	var answer struct {
		Message struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"message"`
	}
	_ = json.Unmarshal(events[len(events)-3].Data, &answer) // the last assistant/message
	fmt.Println(answer.Message.Content[0].Text)
	// Output:
	// turn/start
	// user/message
	// step/start
	// request/header
	// request/context
	// assistant/message
	// tool/call
	// tool/result
	// step/end
	// step/start
	// assistant/message
	// step/end
	// turn/end
	// You have no subagents yet.
}

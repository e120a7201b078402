package dsh_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/host"
	"github.com/dsh-actors/dsh-actors/modelagent"
	"github.com/dsh-actors/dsh-actors/modelagent/modelagenttest"
)

// A custom agent starts its own continuable child during its turn, waits
// for its answer, sends it a follow-up, waits again and lists its
// children, all through its agent.Host. Options.NewAgent builds every
// agent, the child's too: a child's options name its parent.
func Example_customAgent() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-custom-*")
	defer os.RemoveAll(dir)

	shout := agent.Func(func(ctx context.Context, h agent.Host, msg event.UserMessage) (agent.StopReason, error) {
		return agent.Completed, h.Say(ctx, event.Text(strings.ToUpper(event.TextOf(msg.Content))))
	})
	delegate := agent.Func(func(ctx context.Context, h agent.Host, msg event.UserMessage) (agent.StopReason, error) {
		kids := h.Subagents()
		child, _, err := kids.Spawn(ctx, "shouter", event.TextOf(msg.Content))
		if err != nil {
			return agent.Error, err
		}
		first, _, err := kids.Wait(ctx, child)
		if err != nil {
			return agent.Error, err
		}
		if _, err := kids.Send(ctx, child, "and again"); err != nil {
			return agent.Error, err
		}
		second, _, err := kids.Wait(ctx, child)
		if err != nil {
			return agent.Error, err
		}
		children, err := kids.Children(ctx)
		if err != nil {
			return agent.Error, err
		}
		answer := fmt.Sprintf("%s, %s (%d child: %s)", first.LastAssistantText(), second.LastAssistantText(), len(children), children[0].Label)
		return agent.Completed, h.Say(ctx, event.Text(answer))
	})
	newAgent := func(opts agent.Options) agent.Agent {
		if opts.ParentSession != "" {
			return shout
		}
		return delegate
	}
	rt, _ := dsh.Open(dsh.Options{Dir: dir, NewAgent: newAgent})
	defer rt.Close()

	boss, _ := rt.StartAgent(ctx, "boss")
	_, _ = rt.Prompt(ctx, "boss", "hello")
	_ = boss.WhenIdle(ctx)
	reply, _ := boss.LastReply()
	fmt.Println(reply)
	// Output: HELLO, AND AGAIN (1 child: shouter)
}

// The model agent served over HTTP: one session.prompt call (the wire
// protocol is docs/wire-protocol.md) opens a turn in which the mock model
// calls list_agents and then answers; the RPC answers at acceptance and
// the handle's WhenIdle waits for the turn.
func Example_serve() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-serve-*")
	defer os.RemoveAll(dir)
	model := modelagenttest.NewServer(
		modelagenttest.CallTools(modelagenttest.Call{ID: "call-1", Name: modelagent.ToolListAgents, Args: []string{"{}"}}),
		modelagenttest.Say("No subagents."),
	)
	defer model.Close()
	agents, _ := modelagent.New(modelagent.Config{BaseURL: model.URL, APIKey: "test-key", Model: "scripted-model"})
	rt, _ := dsh.Open(dsh.Options{Dir: dir, ModelAgents: agents})
	defer rt.Close()
	handler := host.New(rt, host.Options{})
	defer handler.Close()
	server := httptest.NewServer(handler)
	defer server.Close()

	a, _ := rt.StartAgent(ctx, "assistant")
	body := `{"type":"client-request","rpcId":"1","method":"session.prompt","payload":` +
		`{"sessionId":"assistant","mode":"queue","content":[{"type":"text","text":"any subagents?"}]}}`
	resp, err := http.Post(server.URL+"/api/session.prompt", "application/json", bytes.NewBufferString(body))
	if err != nil {
		fmt.Println(err)
		return
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(string(answer))
	_ = a.WhenIdle(ctx)
	conversation, _ := a.Conversation()
	for _, e := range conversation {
		fmt.Println(strings.TrimSpace(e.Role + " " + event.TextOf(e.Content)))
	}
	fmt.Println(len(model.Received()), "model calls")
	// Output:
	// {"type":"server-response","rpcId":"1","result":{"ok":true,"value":{"accepted":true}}}
	// user any subagents?
	// assistant
	// tool (no subagents)
	// assistant No subagents.
	// 2 model calls
}

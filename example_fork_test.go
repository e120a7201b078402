package dsh_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
)

// Inside a turn, Fork starts a continuable child through the fork
// provider: its conversation begins with the parent's completed turns
// (not the turn that forks it), then its own prompt.
func Example_fork() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-fork-*")
	defer os.RemoveAll(dir)

	recall := agent.Func(func(ctx context.Context, h agent.Host, msg event.UserMessage) (agent.StopReason, error) {
		conversation, err := h.Conversation()
		if err != nil {
			return agent.Error, err
		}
		var lines []string
		for _, e := range conversation {
			lines = append(lines, e.Role+": "+event.TextOf(e.Content))
		}
		return agent.Completed, h.Say(ctx, event.Text(strings.Join(lines, " | ")))
	})
	lead := agent.Func(func(ctx context.Context, h agent.Host, msg event.UserMessage) (agent.StopReason, error) {
		text := event.TextOf(msg.Content)
		if text != "fork" {
			return agent.Completed, h.Say(ctx, event.Text("noted "+text))
		}
		kids := h.Subagents()
		child, _, err := kids.Fork(ctx, "twin", "what do you remember?")
		if err != nil {
			return agent.Error, err
		}
		end, _, err := kids.Wait(ctx, child)
		if err != nil {
			return agent.Error, err
		}
		return agent.Completed, h.Say(ctx, event.Text(end.LastAssistantText()))
	})
	rt, _ := dsh.Open(dsh.Options{Dir: dir, NewAgent: func(opts agent.Options) agent.Agent {
		if opts.ParentSession != "" {
			return recall
		}
		return lead
	}})
	defer rt.Close()

	p, _ := rt.StartAgent(ctx, "lead")
	for _, text := range []string{"42", "fork"} {
		_, _ = rt.Prompt(ctx, "lead", text)
		_ = p.WhenIdle(ctx)
	}
	reply, _ := p.LastReply()
	fmt.Println(reply)
	// Output: user: 42 | assistant: noted 42 | user: what do you remember?
}

// AgentElsewhere finds an agent another process runs only on a shared
// store with a durable inbox: on a JSONL folder it is never there.
func ExampleRuntime_AgentElsewhere() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-elsewhere-*")
	defer os.RemoveAll(dir)
	rt, _ := dsh.Open(dsh.Options{Dir: dir})
	defer rt.Close()

	_, _ = rt.StartAgent(ctx, "here")
	_, elsewhere, err := rt.AgentElsewhere(ctx, "here")
	fmt.Println(elsewhere, err)
	// Output: false <nil>
}

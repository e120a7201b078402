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

// shout is a custom agent: every turn answers the opening message in
// capitals.
func shout(agent.Options) agent.Agent {
	return agent.Func(func(ctx context.Context, host agent.Host, msg event.UserMessage) (agent.StopReason, error) {
		return agent.Completed, host.Say(ctx, event.Text(strings.ToUpper(msg.Content[0].Text)))
	})
}

// Open a runtime over a JSONL folder with a custom agent, start an agent,
// give it one turn and read what it logged.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dsh-example-*")
	defer os.RemoveAll(dir)

	rt, err := dsh.Open(dsh.Options{Dir: dir, NewAgent: shout})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()

	a, _ := rt.StartAgent(ctx, "hello")
	_, _ = a.Followup(ctx, event.Text("hello, world"), event.Source{Kind: "user"})
	_ = a.WhenIdle(ctx)
	for _, ev := range a.Session().Events() {
		fmt.Println(ev.Type)
	}
	// Output:
	// turn/start
	// user/message
	// step/start
	// assistant/message
	// step/end
	// turn/end
}

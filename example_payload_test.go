package dsh_test

import (
	"context"
	"fmt"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/event"
)

// Event.Payload reads what a logged event says as a typed value: here the
// user's message, the agent's answer and how the turn ended, from the
// agent's History (a Notice's Event reads the same way as it is appended).
func ExampleEvent_Payload() {
	ctx := context.Background()
	rt, _ := dsh.Open(dsh.Options{})
	defer rt.Close()
	h, _ := rt.StartAgent(ctx, "reader")
	_, _ = rt.Prompt(ctx, h.ID(), "reply hello\nfail the disk is full")
	_ = h.WhenIdle(ctx)

	log, _ := rt.History(ctx, h.ID())
	for _, e := range log.Events {
		p, err := e.Payload()
		if err != nil {
			fmt.Println(err)
			continue
		}
		switch v := p.(type) {
		case event.UserMessage:
			fmt.Printf("user: %q\n", event.TextOf(v.Content))
		case event.AssistantMessage:
			fmt.Printf("agent: %q\n", event.TextOf(v.Content))
		case event.TurnEnd:
			fmt.Printf("turn %d ended %s: %s\n", v.Turn, v.Reason, v.Message)
		}
	}
	// Output:
	// user: "reply hello\nfail the disk is full"
	// agent: "hello"
	// turn 1 ended error: the disk is full
}

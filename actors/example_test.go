package actors_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/session"
)

// A memory-only runtime running one scripted agent: each follow-up is its
// own turn, and the reply lands in the agent's session log.
func Example() {
	ctx := context.Background()
	rt, err := actors.New(actors.Options{})
	if err != nil {
		panic(err)
	}
	defer rt.Close(ctx)

	h, err := rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: "demo"}})
	if err != nil {
		panic(err)
	}
	if _, err := rt.Followup(ctx, "demo", event.Text("reply hello"), event.Source{Kind: "user"}); err != nil {
		panic(err)
	}
	if _, err := rt.Followup(ctx, "demo", event.Text("reply again\nrefuse"), event.Source{Kind: "user"}); err != nil {
		panic(err)
	}
	if err := h.Activation().WhenIdle(ctx); err != nil {
		panic(err)
	}
	for _, e := range h.Session().Events() {
		switch e.Type {
		case "assistant/message":
			var m struct {
				Message struct{ Content []event.Block } `json:"message"`
			}
			_ = json.Unmarshal(e.Data, &m)
			fmt.Println(e.Type, m.Message.Content[0].Text)
		case "turn/start", "turn/end":
			fmt.Println(e.Type, string(e.Data))
		}
	}
	// Output:
	// turn/start {"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}
	// assistant/message hello
	// turn/end {"turn":1,"reason":{"kind":"completed"}}
	// turn/start {"turn":2,"trigger":{"kind":"message","source":{"kind":"user"}}}
	// assistant/message again
	// turn/end {"turn":2,"reason":{"kind":"refusal"}}
}

package modelagent_test

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

// A model agent whose first model call is rate-limited: the retry policy
// retries RATE_LIMIT once after 1 ms, so the failed turn logs llm/retry
// and ends in error, and a retry turn calls the model again. The mock
// model is an OpenAI-compatible server on loopback: no key, no network.
func ExampleNew() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "modelagent-example-*")
	defer os.RemoveAll(dir)

	model := modelagenttest.NewServer(
		modelagenttest.Status(429, `{"error":{"message":"Rate limit reached"}}`, "Retry-After", "0"),
		modelagenttest.Say("Hello!"),
	)
	defer model.Close()
	agents, err := modelagent.New(modelagent.Config{
		BaseURL: model.URL, APIKey: "test-key", Model: "scripted-model",
		Retry: &modelagent.RetryPolicy{Mode: modelagent.RetryNormal, MaxRetries: 1,
			RetryableCodes: []string{"RATE_LIMIT"}, InitialDelayMs: 1, MaxDelayMs: 1000},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	rt, _ := dsh.Open(dsh.Options{Dir: dir, ModelAgents: agents})
	defer rt.Close()

	a, _ := rt.StartAgent(ctx, "assistant")
	_, _ = rt.Prompt(ctx, "assistant", "hi")
	_ = a.WhenIdle(ctx)
	history, _ := rt.History(ctx, a.ID())
	for _, e := range history.Events {
		var logged struct {
			Retry, MaxRetries int
			DelayMs           float64
			Failure           struct{ Code string }
			Reason            struct {
				Kind    string
				Failure struct{ Code string }
			}
		}
		_ = json.Unmarshal(e.Data, &logged)
		switch e.Type {
		case "assistant/chunk": // the streamed deltas the message cites
		case "llm/retry":
			fmt.Printf("%s %d of %d in %v ms after %s\n", e.Type, logged.Retry, logged.MaxRetries, logged.DelayMs, logged.Failure.Code)
		case "turn/end":
			fmt.Println(strings.TrimSpace(e.Type + " " + logged.Reason.Kind + " " + logged.Reason.Failure.Code))
		default:
			fmt.Println(e.Type)
		}
	}
	fmt.Println(len(model.Received()), "model calls")
	// Output:
	// turn/start
	// user/message
	// step/start
	// request/header
	// request/context
	// step/end
	// llm/retry 1 of 1 in 1 ms after RATE_LIMIT
	// turn/end error RATE_LIMIT
	// turn/start
	// step/start
	// assistant/message
	// step/end
	// turn/end completed
	// 2 model calls
}

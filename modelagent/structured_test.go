package modelagent_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
	"github.com/dsh-actors/dsh-actors/modelagent"
	"github.com/dsh-actors/dsh-actors/subagent"
)

const countSchema = `{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"],"additionalProperties":false}`

// structuredRun runs a one-shot spawn child asked for countSchema over
// client's replies and returns its result and the requests sent.
func structuredRun(t *testing.T, replies ...llmtest.Step) (subagent.Result, *llmtest.Client) {
	t.Helper()
	client := llmtest.NewClient(replies...)
	r := newRigWith(t, client, modelagent.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := r.rt.StartAgent(ctx, parentSpec("asker"))
	require.NoError(t, err)
	run, err := r.service.Start(ctx, subagent.SpawnName, subagent.StartRequest{Prompt: event.Text("count"), Parent: p,
		OutputSchema: json.RawMessage(countSchema)})
	require.NoError(t, err)
	result, err := run.Result(ctx)
	require.NoError(t, err)
	require.NoError(t, run.Dispose(ctx))
	return result, client
}

func TestStructuredOutputIsValidatedAndReturned(t *testing.T) {
	result, client := structuredRun(t, llmtest.Reply(llmtest.Say(`{"count": 3}`)))
	require.Equal(t, agent.Completed, result.StopReason)
	require.JSONEq(t, `{"count":3}`, string(result.Structured))
	require.Contains(t, client.Requests()[0].System, "valid against this JSON Schema:\n"+countSchema,
		"a server without response_format json_schema is instructed")
}

func TestStructuredOutputIsRepairedOnce(t *testing.T) {
	result, client := structuredRun(t, llmtest.Reply(llmtest.Say(`three`)), llmtest.Reply(llmtest.Say("```json\n{\"count\": 3}\n```")))
	require.Equal(t, agent.Completed, result.StopReason)
	require.JSONEq(t, `{"count":3}`, string(result.Structured))
	reqs := client.Requests()
	require.Len(t, reqs, 2)
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	require.Equal(t, event.RoleUser, last.Role)
	require.Contains(t, event.TextOf(last.Content), "Your answer is not valid against the output schema: it is not JSON")
}

func TestStructuredOutputFailsCleanlyAfterOneRepair(t *testing.T) {
	result, client := structuredRun(t, llmtest.Reply(llmtest.Say(`{"count": "three"}`)), llmtest.Reply(llmtest.Say(`{"count": 3.5}`)))
	require.Equal(t, agent.Error, result.StopReason)
	require.Nil(t, result.Structured)
	require.Len(t, client.Requests(), 2, "asked again once, not more")
}

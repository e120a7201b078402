package modelagent_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
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
	result, client, _ := structuredRunLogged(t, replies...)
	return result, client
}

// structuredRunLogged is structuredRun also returning the child's log.
func structuredRunLogged(t *testing.T, replies ...llmtest.Step) (subagent.Result, *llmtest.Client, []logged) {
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
	log := events(t, run.LocalAgent().Session())
	require.NoError(t, run.Dispose(ctx))
	return result, client, log
}

func TestStructuredOutputIsValidatedAndReturned(t *testing.T) {
	result, client := structuredRun(t, llmtest.Reply(llmtest.Say(`{"count": 3}`)))
	require.Equal(t, agent.Completed, result.StopReason)
	require.JSONEq(t, `{"count":3}`, string(result.Structured))
	require.Contains(t, client.Requests()[0].System, "valid against this JSON Schema:\n"+countSchema,
		"a server without response_format json_schema is instructed")
}

// TestStructuredOutputIsRepairedOnce: an answer that is not valid is
// asked again once; the message asking again is logged in the same turn,
// before the step that sends it, as a user/message from the plugin
// "structured-output" on the conversation's surface, and is the last
// message of that step's request.
func TestStructuredOutputIsRepairedOnce(t *testing.T) {
	result, client, log := structuredRunLogged(t, llmtest.Reply(llmtest.Say(`three`)), llmtest.Reply(llmtest.Say("```json\n{\"count\": 3}\n```")))
	require.Equal(t, agent.Completed, result.StopReason)
	require.JSONEq(t, `{"count":3}`, string(result.Structured))
	reqs := client.Requests()
	require.Len(t, reqs, 2)
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	require.Equal(t, event.RoleUser, last.Role)
	const reask = "Your answer is not valid against the output schema: it is not JSON. Answer again with only the JSON value, valid against the schema."
	require.Equal(t, reask, event.TextOf(last.Content))

	require.Equal(t, []string{"turn/start", "user/message", "step/start", "step/end", "user/message", "step/start", "step/end", "turn/end"},
		slices.DeleteFunc(types(log), func(typ string) bool {
			return !strings.HasPrefix(typ, "turn/") && !strings.HasPrefix(typ, "step/") && typ != "user/message"
		}),
		"one turn: the re-ask is logged between the two steps")
	users := ofType(log, "user/message")
	require.Len(t, users, 2)
	repair := users[1]
	require.Equal(t, map[string]any{"kind": "plugin", "plugin": "structured-output"}, repair.Data["source"])
	require.Equal(t, "user", repair.Data["role"])
	require.Equal(t, []any{map[string]any{"type": "text", "text": reask}}, repair.Data["content"])
	require.Equal(t, "append", repair.SurfaceOp, "on the conversation's surface")
	require.Regexp(t, `^\{"content":\[.*\],"source":\{"kind":"plugin","plugin":"structured-output"\},"role":"user","id":"[0-9a-f-]{36}"\}$`, repair.Raw,
		"the original's key order")
}

func TestStructuredOutputFailsCleanlyAfterOneRepair(t *testing.T) {
	result, client := structuredRun(t, llmtest.Reply(llmtest.Say(`{"count": "three"}`)), llmtest.Reply(llmtest.Say(`{"count": 3.5}`)))
	require.Equal(t, agent.Error, result.StopReason)
	require.Nil(t, result.Structured)
	require.Len(t, client.Requests(), 2, "asked again once, not more")
}

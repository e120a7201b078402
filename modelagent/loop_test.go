package modelagent_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/llm"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/modelagent"
	"github.com/dsh-actors/dsh-actors/session"
)

func TestASimpleTurnIsLoggedAsTheOriginalLogsIt(t *testing.T) {
	client := llmtest.NewClient(llmtest.Reply(llmtest.Say("Hel", "lo")))
	r := newRig(t, client)
	h := r.turn(t, "solo", "hi")
	log := events(t, h.Session())
	require.Equal(t, []string{"turn/start", "user/message", "step/start", "request/header", "request/context",
		"assistant/chunk", "assistant/chunk", "assistant/chunk", "assistant/chunk", "assistant/chunk", "assistant/chunk",
		"assistant/message", "step/end", "turn/end"}, types(log))
	require.Equal(t, `{"turn":1,"step":1}`, log[2].Raw)
	header := log[3].Data["header"].(map[string]any)
	require.Equal(t, "initial", log[3].Data["reason"])
	require.Equal(t, map[string]any{"provider": "deepseek-official", "model": "deepseek-v4-flash"}, header["config"])
	require.Equal(t, modelagent.DefaultSystem, header["system"])
	require.Len(t, header["tools"], 4)
	require.Equal(t, `{"provider":"deepseek-official","model":"deepseek-v4-flash"}`, log[4].Raw)
	require.Equal(t, `{"turn":1,"step":1,"chunk":{"type":"block-start","index":0,"blockType":"text"}}`, log[5].Raw)
	msg := log[11]
	require.Equal(t, []int64{5, 6, 7, 8, 9, 10}, msg.SourceEventSeqs)
	require.Equal(t, "append", msg.SurfaceOp)
	require.Contains(t, msg.Raw, `"message":{"role":"assistant","content":[{"type":"text","text":"Hello"}],"source":{"kind":"model","provider":"deepseek-official","model":"deepseek-v4-flash"},"id":"`)
	require.Contains(t, msg.Raw, `"usage":{"inputTokens":10,"outputTokens":2}}`)
	require.Equal(t, `{"turn":1,"reason":{"kind":"completed"}}`, log[13].Raw)

	reqs := client.Requests()
	require.Len(t, reqs, 1)
	require.Equal(t, []llm.Message{{Role: "user", Content: event.Text("hi")}}, reqs[0].Messages)
	require.Equal(t, []string{"list_agents", "send_message", "subagent", "subagent_fork"}, toolNames(reqs[0].Tools))
}

func toolNames(tools []vocab.ToolSpec) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return names
}

func TestBadModelOutputGetsTheOriginalsErrorResults(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	client := llmtest.NewClient(
		llmtest.Reply(llmtest.CallTools(
			llmtest.Call{ID: "c1", Name: "list_agents", Args: []string{`{not json`}},
			llmtest.Call{Name: "list_agents", Args: []string{`{}`}},
			llmtest.Call{ID: "c3", Name: "task_output", Args: []string{`{"task_id": "x"}`}},
			llmtest.Call{ID: "c4", Name: "subagent", Args: []string{`{"description": 5}`}},
		)),
		llmtest.Reply(llmtest.Response{Text: []string{huge, huge[:10]}, Usage: &llmtest.Usage{Prompt: 1, Completion: 1}}),
	)
	r := newRig(t, client)
	h := r.turn(t, "bad", "go")
	log := events(t, h.Session())
	results := ofType(log, "tool/result")
	require.Len(t, results, 4)
	want := []struct{ id, text, errorJSON string }{
		{"c1", `Error: invalid arguments: \"arguments\" must be an object`, `"error":{"name":"ToolArgsError","code":"INVALID_ARGS"}`},
		{"call-1", `(no subagents)`, ``},
		{"c3", `Error: unknown tool \"task_output\"`, `"error":{"name":"ToolNotFoundError","code":"UNKNOWN_TOOL"}`},
		{"c4", `Error: invalid arguments: missing required property \"prompt\"; \"description\" must be a string`, `"error":{"name":"ToolArgsError","code":"INVALID_ARGS"}`},
	}
	calls := ofType(log, "tool/call")
	for i, w := range want {
		res := results[i]
		require.Contains(t, res.Raw, `"message":{"source":{"kind":"tool","callId":"`+w.id+`"},"content":[{"type":"tool-result","toolCallId":"`+w.id+`","content":[{"type":"text","text":"`+w.text+`"}],"isError":`+boolText(w.errorJSON != "")+`}],"role":"user","id":"`)
		if w.errorJSON != "" {
			require.True(t, strings.HasSuffix(res.Raw, `},`+w.errorJSON+`}`), res.Raw)
		}
		require.Equal(t, []int64{calls[i].Seq}, res.SourceEventSeqs)
		require.Equal(t, calls[i].Seq+1, res.Seq, "exclusive calls alternate")
		require.Equal(t, w.id, calls[i].Data["callId"])
	}
	msgs := ofType(log, "assistant/message")
	require.Len(t, msgs, 2)
	require.Contains(t, msgs[1].Raw, huge+huge[:10])
	require.Equal(t, `{"turn":1,"reason":{"kind":"completed"}}`, log[len(log)-1].Raw)
	require.Equal(t, []int64{1, 2}, stepNumbers(log))

	second := client.Requests()[1].Messages
	require.Equal(t, event.RoleAssistant, second[1].Role)
	for i, w := range want {
		require.Equal(t, event.RoleTool, second[2+i].Role)
		require.Equal(t, w.id, second[2+i].ToolCallID)
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func stepNumbers(log []logged) []int64 {
	var steps []int64
	for _, e := range ofType(log, "step/start") {
		steps = append(steps, int64(e.Data["step"].(float64)))
	}
	return steps
}

func TestModelFailuresEndTheTurn(t *testing.T) {
	client := llmtest.NewClient(
		llmtest.Fail(&llm.Error{Failure: vocab.Failure{Message: "Authentication Fails", Code: "AUTH", Status: 401}}),
		llmtest.Reply(llmtest.Response{Text: []string{"x"}, Finish: "content_filter"}),
		llmtest.Reply(llmtest.Response{Text: []string{"cut"}, Calls: []llmtest.Call{{ID: "c", Name: "list_agents", Args: []string{"{}"}}}, Finish: "length"}),
	)
	r := newRig(t, client)
	auth := events(t, r.turn(t, "auth", "hi").Session())
	require.Equal(t, []string{"turn/start", "user/message", "step/start", "request/header", "request/context", "step/end", "turn/end"}, types(auth))
	require.Equal(t, `{"turn":1,"reason":{"kind":"error","step":1,"failure":{"message":"Authentication Fails","code":"AUTH","status":401}}}`, auth[6].Raw)

	filtered := events(t, r.turn(t, "filter", "hi").Session())
	require.Equal(t, `{"turn":1,"reason":{"kind":"error","step":1,"failure":{"message":"model stopped: content_filter","code":"CONTENT_FILTER"}}}`, filtered[len(filtered)-1].Raw)
	require.Empty(t, ofType(filtered, "assistant/message"), "an error finish logs no message; its chunks stay")
	require.Len(t, ofType(filtered, "assistant/chunk"), 4)

	cut := events(t, r.turn(t, "cut", "hi").Session())
	require.Equal(t, `{"turn":1,"reason":{"kind":"max-tokens"}}`, cut[len(cut)-1].Raw)
	msg := ofType(cut, "assistant/message")
	require.Len(t, msg, 1)
	require.NotContains(t, msg[0].Raw, "tool-call", "max-tokens drops the tool calls")
	require.Empty(t, ofType(cut, "tool/call"))
}

func TestCancellingATurnEndsItAborted(t *testing.T) {
	client := llmtest.NewClient(llmtest.Hang())
	r := newRig(t, client)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	streaming := make(chan struct{})
	var once sync.Once
	defer r.rt.Sessions().Subscribe(func(c session.Change) {
		if c.Kind == session.Appended && c.Header.ID == "hang" && strings.Contains(string(c.Event.Data), `"text-delta"`) {
			once.Do(func() { close(streaming) })
		}
	})()
	h, err := r.rt.StartAgent(ctx, parentSpec("hang"))
	require.NoError(t, err)
	_, err = h.Followup(ctx, event.Text("hi"), event.Source{Kind: event.SourceUser})
	require.NoError(t, err)
	testkit.Receive(t, streaming, "the hanging turn's first text delta")
	h.Activation().Cancel(agent.CancelCause{Kind: agent.CauseUser}, false)
	require.NoError(t, h.Activation().WhenIdle(ctx))
	log := events(t, h.Session())
	require.Equal(t, []string{"turn/start", "user/message", "step/start", "request/header", "request/context",
		"assistant/chunk", "assistant/chunk", "step/end", "turn/end"}, types(log))
	require.Equal(t, `{"turn":1,"reason":{"kind":"aborted"}}`, log[len(log)-1].Raw)
}

// plainHost is an agent.Host of someone else's: its steps are plain
// agent.Steps, without the model's transcript.
type plainHost struct{ steps int }

func (*plainHost) SessionID() string                          { return "plain" }
func (*plainHost) Say(context.Context, []event.Block) error   { return nil }
func (*plainHost) Subagents() agent.Subagents                 { return nil }
func (*plainHost) Conversation() ([]agent.Entry, error)       { return nil, nil }
func (h *plainHost) Step(context.Context) (agent.Step, error) { h.steps++; return plainStep{}, nil }

// plainStep is a step without the transcript.
type plainStep struct{}

func (plainStep) Number() int                                            { return 1 }
func (plainStep) Message(context.Context, []event.Block) (string, error) { return "m", nil }
func (plainStep) ToolCall(context.Context, event.ToolCallBlock) error    { return nil }
func (plainStep) ToolResult(context.Context, agent.ToolResult) (string, error) {
	return "r", nil
}
func (plainStep) End(context.Context) error { return nil }

// TestAModelTurnOnAHostWithoutTheTranscriptFailsClearly: the model agent
// logs its transcript only through the runtime's steps; on another host's
// step it fails the turn saying so, before calling the model.
func TestAModelTurnOnAHostWithoutTheTranscriptFailsClearly(t *testing.T) {
	client := llmtest.NewClient(llmtest.Reply(llmtest.Say("never")))
	agents := modelagent.NewOver(modelagent.Config{Model: "m"}, client, func() float64 { return 0.5 })
	host := &plainHost{}
	stop, err := agents.Factory(agent.Options{SessionID: "plain"}).RunTurn(context.Background(), host,
		event.UserMessage{Content: event.Text("hi"), Source: event.Source{Kind: event.SourceUser}, Role: event.RoleUser, ID: "u1"})
	require.Equal(t, agent.Error, stop)
	require.ErrorContains(t, err, "modelagent: the host's step cannot log the model transcript")
	require.Equal(t, 1, host.steps)
	require.Empty(t, client.Requests())
}

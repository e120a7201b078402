package dsh

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/event"
)

// TestEventPayload: each event type Payload reads gives its typed payload
// with every field the log holds, in every reason shape of turn/end; the
// runtime's other events read as nil.
func TestEventPayload(t *testing.T) {
	three := 3
	for _, c := range []struct {
		typ, data string
		want      event.Payload
	}{
		{"user/message", `{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"role":"user","id":"m1"}`,
			event.UserMessage{Content: event.Text("hi"), Source: event.Source{Kind: "user"}, Role: "user", ID: "m1"}},
		{"assistant/message", `{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"source":{"kind":"model","provider":"p","model":"m"},"id":"a1"}}`,
			event.AssistantMessage{Content: event.Text("ok")}},
		{"assistant/chunk", `{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"he"}}`, event.Delta{Text: "he"}},
		{"assistant/chunk", `{"turn":1,"step":1,"chunk":{"type":"reasoning-delta","index":0,"text":"hm"}}`, event.Delta{Text: "hm", Reasoning: true}},
		{"assistant/chunk", `{"turn":1,"step":1,"chunk":{"type":"block-start","index":0,"blockType":"text"}}`, nil},
		{"tool/call", `{"turn":1,"step":1,"callId":"c1","name":"read","arguments":"{\"p\":1}"}`,
			event.ToolCall{CallID: "c1", Name: "read", Arguments: `{"p":1}`}},
		{"tool/result", `{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"c1"},"content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"no"}],"isError":true}],"role":"user","id":"r1"}}`,
			event.ToolResult{Results: []event.ToolOutput{{CallID: "c1", Content: event.Text("no"), IsError: true}}}},
		{"llm/retry", `{"turn":1,"step":2,"provider":"p","mode":"m","policyKey":"k","retry":2,"maxRetries":3,"delayMs":12.5,"failure":{"message":"slow","code":"RATE"}}`,
			event.Retry{Attempt: 2, MaxRetries: &three, DelayMs: 12.5, Message: "slow", Code: "RATE"}},
		{"llm/retry", `{"turn":1,"step":2,"provider":"p","mode":"m","policyKey":"k","retry":1,"delayMs":0,"failure":{"message":"x","code":""}}`,
			event.Retry{Attempt: 1, Message: "x"}},
		{"turn/end", `{"turn":1,"reason":{"kind":"completed"}}`, event.TurnEnd{Turn: 1, Reason: "completed"}},
		{"turn/end", `{"turn":2,"reason":{"kind":"aborted","reason":{"kind":"user"}}}`, event.TurnEnd{Turn: 2, Reason: "aborted"}},
		{"turn/end", `{"turn":3,"reason":{"kind":"error","step":1,"message":"boom","code":"E1"}}`,
			event.TurnEnd{Turn: 3, Reason: "error", Message: "boom", Code: "E1"}},
		{"turn/end", `{"turn":4,"reason":{"kind":"error","step":1,"failure":{"message":"down","code":"MODEL"}}}`,
			event.TurnEnd{Turn: 4, Reason: "error", Message: "down", Code: "MODEL"}},
		{"turn/end", `{"turn":5,"reason":{"kind":"error","error":{"message":"late","code":"L"}}}`,
			event.TurnEnd{Turn: 5, Reason: "error", Message: "late", Code: "L"}},
		{"turn/start", `{"turn":1}`, nil},
		{"step/start", `not json`, nil},
		{"subagent/descriptor", `{"version":1,"provider":"spawn","label":"x"}`, nil},
		{"custom/thing", `{"n":1}`, nil},
	} {
		got, err := Event{Type: c.typ, Data: json.RawMessage(c.data)}.Payload()
		require.NoError(t, err, c.typ+" "+c.data)
		require.Equal(t, c.want, got, c.typ+" "+c.data)
		if c.want != nil {
			require.Equal(t, c.typ, got.EventType())
		}
	}
}

// TestEventPayloadRefusesAMalformedPayload: data that is not its type's
// shape is an error naming the type.
func TestEventPayloadRefusesAMalformedPayload(t *testing.T) {
	for _, typ := range []string{"user/message", "assistant/message", "assistant/chunk", "tool/call", "tool/result", "llm/retry", "turn/end"} {
		_, err := Event{Type: typ, Data: json.RawMessage(`[1]`)}.Payload()
		require.ErrorContains(t, err, typ)
	}
	_, err := Event{Type: "turn/end", Data: json.RawMessage(`{"turn":1,"reason":{}}`)}.Payload()
	require.ErrorContains(t, err, "turn/end", "a reason without a kind")
}

package vocab

import (
	"encoding/json"
	"testing"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/jsjson"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

// Every payload is written with the original's key order and read back
// equal; the byte strings are the shapes the original's logs hold.
func TestPayloadsRoundTrip(t *testing.T) {
	args := `{"description": "Reply with CHILD_OK"}`
	call := event.ToolCallBlock{ID: "call_1", Name: "subagent", Arguments: args}
	for _, tc := range []struct {
		p    Payload
		want string
	}{
		{TurnStart{Turn: 1, Trigger: &Trigger{Kind: TriggerMessage, Source: &event.Source{Kind: "user"}}},
			`{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}`},
		{TurnStart{Turn: 2, Trigger: &Trigger{Kind: TriggerMessage, Source: &event.Source{Kind: "coordinator", SenderSessionID: "p1"}}},
			`{"turn":2,"trigger":{"kind":"message","source":{"kind":"coordinator","senderSessionId":"p1"}}}`},
		{TurnStart{Turn: 2, Trigger: &Trigger{Kind: TriggerRetry}}, `{"turn":2,"trigger":{"kind":"retry"}}`},
		{TurnStart{Turn: 3}, `{"turn":3}`},
		{Step{Turn: 1, Step: 2, Kind: TypeStepStart}, `{"turn":1,"step":2}`},
		{Step{Turn: 1, Step: 2, Kind: TypeStepEnd}, `{"turn":1,"step":2}`},
		{TurnEnd{Turn: 4, Reason: Reason{Kind: ReasonCompleted}}, `{"turn":4,"reason":{"kind":"completed"}}`},
		{TurnEnd{Turn: 4, Reason: Reason{Kind: ReasonAborted, Cause: &Cause{Kind: "hook", Reason: "budget"}}},
			`{"turn":4,"reason":{"kind":"aborted","reason":{"kind":"hook","reason":"budget"}}}`},
		{TurnEnd{Turn: 1, Reason: Reason{Kind: ReasonError, Step: 1, Message: "snapshot disk full"}},
			`{"turn":1,"reason":{"kind":"error","step":1,"message":"snapshot disk full"}}`},
		{TurnEnd{Turn: 1, Reason: Reason{Kind: ReasonError, Step: 3, Message: "<a> & b", Code: "RATE_LIMIT"}},
			`{"turn":1,"reason":{"kind":"error","step":3,"message":"<a> & b","code":"RATE_LIMIT"}}`},
		{TurnEnd{Turn: 1, Reason: Reason{Kind: ReasonError, Step: 1, Failure: &Failure{Message: "model returned a completed response with no content", Code: "EMPTY_RESPONSE"}}},
			`{"turn":1,"reason":{"kind":"error","step":1,"failure":{"message":"model returned a completed response with no content","code":"EMPTY_RESPONSE"}}}`},
		{TurnEnd{Turn: 1, Reason: Reason{Kind: ReasonError, Error: &Failure{Message: "snapshot disk full", Code: "UNKNOWN"}}},
			`{"turn":1,"reason":{"kind":"error","error":{"message":"snapshot disk full","code":"UNKNOWN"}}}`},
		{event.UserMessage{Content: event.Text("hi"), Source: event.Source{Kind: "user"}, Role: event.RoleUser, ID: "m1"},
			`{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"role":"user","id":"m1"}`},
		{SteeringMessage{Message: event.UserMessage{Content: event.Text("hi"), Source: event.Source{Kind: "user"}, Role: event.RoleUser, ID: "m1"}},
			`{"message":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"role":"user","id":"m1"}}`},
		{AssistantMessage{Turn: 1, Step: 1, Message: Message{Role: event.RoleAssistant, Content: []event.Block{call.Block()},
			Source: event.ModelSource{Kind: event.SourceModel, Provider: "deepseek-official", Model: "deepseek-v4-flash"}, ID: "a1"},
			Usage: &Usage{InputTokens: 10, OutputTokens: 5}},
			`{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"tool-call","id":"call_1","name":"subagent","arguments":"{\"description\": \"Reply with CHILD_OK\"}"}],"source":{"kind":"model","provider":"deepseek-official","model":"deepseek-v4-flash"},"id":"a1"},"usage":{"inputTokens":10,"outputTokens":5}}`},
		{AssistantChunk{Turn: 1, Step: 1, Chunk: Chunk{Type: ChunkBlockStart, Index: 0, BlockType: event.BlockToolCall}},
			`{"turn":1,"step":1,"chunk":{"type":"block-start","index":0,"blockType":"tool-call"}}`},
		{AssistantChunk{Turn: 1, Step: 1, Chunk: Chunk{Type: ChunkToolCallDelta, ID: "call_1", Name: "subagent", ArgumentsDelta: "{}"}},
			`{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":0,"id":"call_1","name":"subagent","argumentsDelta":"{}"}}`},
		{AssistantChunk{Turn: 1, Step: 1, Chunk: Chunk{Type: ChunkToolCallDelta, Index: 1, ArgumentsDelta: ""}},
			`{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":1,"id":"","argumentsDelta":""}}`},
		{AssistantChunk{Turn: 1, Step: 4, Chunk: Chunk{Type: ChunkTextDelta, Index: 0, Text: "DONE"}},
			`{"turn":1,"step":4,"chunk":{"type":"text-delta","index":0,"text":"DONE"}}`},
		{AssistantChunk{Turn: 1, Step: 4, Chunk: Chunk{Type: ChunkReasoningDelta, Index: 0, Text: "hm"}},
			`{"turn":1,"step":4,"chunk":{"type":"reasoning-delta","index":0,"text":"hm"}}`},
		{AssistantChunk{Turn: 1, Step: 1, Chunk: Chunk{Type: ChunkBlockEnd, Index: 0, Block: ptr(call.Block())}},
			`{"turn":1,"step":1,"chunk":{"type":"block-end","index":0,"block":{"type":"tool-call","id":"call_1","name":"subagent","arguments":"{\"description\": \"Reply with CHILD_OK\"}"}}}`},
		{AssistantChunk{Turn: 1, Step: 1, Chunk: Chunk{Type: ChunkUsage, Usage: &Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: ptr(0)}}},
			`{"turn":1,"step":1,"chunk":{"type":"usage","usage":{"inputTokens":10,"outputTokens":5,"cacheReadTokens":0}}}`},
		{AssistantChunk{Turn: 1, Step: 1, Chunk: Chunk{Type: ChunkFinish, Finish: &FinishReason{Kind: FinishToolCalls}}},
			`{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"tool-calls"}}}`},
		{AssistantChunk{Turn: 1, Step: 1, Chunk: Chunk{Type: ChunkFinish, Finish: &FinishReason{Kind: FinishError, Failure: &Failure{Message: "m", Code: "EMPTY_RESPONSE"}}}},
			`{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"error","failure":{"message":"m","code":"EMPTY_RESPONSE"}}}}`},
		{AssistantChunk{Turn: 1, Step: 1, Chunk: Chunk{Type: "future", Raw: json.RawMessage(`{"type":"future","x":1}`)}},
			`{"turn":1,"step":1,"chunk":{"type":"future","x":1}}`},
		{ToolCall{Turn: 1, Step: 1, CallID: "call_1", Name: "subagent", Arguments: args},
			`{"turn":1,"step":1,"callId":"call_1","name":"subagent","arguments":"{\"description\": \"Reply with CHILD_OK\"}"}`},
		{ToolResult{Turn: 1, Step: 1, Message: ToolResultMessage{Source: event.Source{Kind: event.SourceTool, CallID: "call_1"},
			Content: []ToolResultBlock{{Type: event.BlockToolResult, ToolCallID: "call_1", Content: event.Text("started"), IsError: false}}, Role: event.RoleUser, ID: "r1"}},
			`{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"call_1"},"content":[{"type":"tool-result","toolCallId":"call_1","content":[{"type":"text","text":"started"}],"isError":false}],"role":"user","id":"r1"}}`},
		{ToolResult{Turn: 1, Step: 2, Message: ToolResultMessage{Source: event.Source{Kind: event.SourceTool, CallID: "c"},
			Content: []ToolResultBlock{{Type: event.BlockToolResult, ToolCallID: "c", Content: event.Text("x"), IsError: true}}, Role: event.RoleUser, ID: "r2"},
			Error: &event.ToolFailure{Name: "ToolNotStartedError", Code: "TOOL_NOT_STARTED"}, Meta: json.RawMessage(`{"a":1}`)},
			`{"turn":1,"step":2,"message":{"source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"x"}],"isError":true}],"role":"user","id":"r2"},"error":{"name":"ToolNotStartedError","code":"TOOL_NOT_STARTED"},"meta":{"a":1}}`},
		{RequestHeader{Header: Header{Config: Config{Provider: "deepseek-official", Model: "deepseek-v4-flash", ReasoningEffort: "high", MaxTokens: 256000},
			AdapterDefaults: &AdapterDefaults{ReasoningEffort: true, MaxTokens: true}, System: "sys",
			Tools: []ToolSpec{{Name: "list_agents", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`)}}}, Reason: HeaderInitial},
			`{"header":{"config":{"provider":"deepseek-official","model":"deepseek-v4-flash","reasoningEffort":"high","maxTokens":256000},"adapterDefaults":{"reasoningEffort":true,"maxTokens":true},"system":"sys","tools":[{"name":"list_agents","description":"d","parameters":{"type":"object"}}]},"reason":"initial"}`},
		{RequestHeader{Header: Header{Config: Config{Provider: "p", Model: "m"}}, Reason: HeaderResume},
			`{"header":{"config":{"provider":"p","model":"m"}},"reason":"resume"}`},
		{RequestContext{Provider: "deepseek-official", Model: "deepseek-v4-flash", ContextWindow: 1000000},
			`{"provider":"deepseek-official","model":"deepseek-v4-flash","contextWindow":1000000}`},
		{LLMRetry{Turn: 1, Step: 1, Provider: "p", Mode: "normal", PolicyKey: "k", Retry: 1, MaxRetries: ptr(2), DelayMs: 1,
			Failure: Failure{Message: "m", Code: "EMPTY_RESPONSE"}},
			`{"turn":1,"step":1,"provider":"p","mode":"normal","policyKey":"k","retry":1,"maxRetries":2,"delayMs":1,"failure":{"message":"m","code":"EMPTY_RESPONSE"}}`},
		{LLMRetry{Turn: 2, Step: 1, Provider: "p", Mode: "always", PolicyKey: "k", Retry: 3, DelayMs: 1843.9077316461016,
			Failure: Failure{Message: "m", Code: "SERVER", Status: 503}},
			`{"turn":2,"step":1,"provider":"p","mode":"always","policyKey":"k","retry":3,"delayMs":1843.9077316461016,"failure":{"message":"m","code":"SERVER","status":503}}`},
		{SessionEndSeed{}, `{}`},
	} {
		raw, err := Encode(tc.p)
		require.NoError(t, err, tc.want)
		require.Equal(t, tc.want, string(raw))
		back, err := Decode(tc.p.EventType(), raw)
		require.NoError(t, err, tc.want)
		again, err := Encode(back)
		require.NoError(t, err)
		require.Equal(t, tc.want, string(again), "decoded and written again")
	}
}

// The hand-written payloads (turn/start, steps, turn/end) are byte for
// byte what encoding/json writes for the same values.
func TestHandWrittenIsEncodingJSON(t *testing.T) {
	type plainStart TurnStart
	for _, s := range []TurnStart{
		{Turn: 3, Trigger: &Trigger{Kind: TriggerMessage, Source: &event.Source{Kind: "user"}}},
		{Turn: 3, Trigger: &Trigger{Kind: TriggerMessage, Source: &event.Source{Kind: "Odd\"kind"}}},
		{Turn: 3, Trigger: &Trigger{Kind: TriggerMessage, Source: &event.Source{Kind: ""}}},
		{Turn: 3, Trigger: &Trigger{Kind: TriggerMessage, Source: &event.Source{Kind: "user", RPCID: "r"}}},
	} {
		want, err := jsjson.Marshal(plainStart(s))
		require.NoError(t, err)
		got, err := Encode(s)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	}
	for _, kind := range []string{"completed", "aborted", "disposed", "max-tokens", "refusal", "interrupted", "Odd\"kind"} {
		want, err := jsjson.Marshal(map[string]any{"turn": 12, "reason": map[string]string{"kind": kind}})
		require.NoError(t, err)
		got, err := Encode(TurnEnd{Turn: 12, Reason: Reason{Kind: kind}})
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(got))
		require.True(t, json.Valid(got))
	}
	for _, r := range []Reason{
		{Kind: ReasonAborted, Cause: &Cause{Kind: "parent"}},
		{Kind: ReasonAborted, Cause: &Cause{Kind: "user"}},
		{Kind: ReasonAborted, Cause: &Cause{Kind: "disposed"}},
		{Kind: ReasonAborted, Cause: &Cause{Kind: "hook", Reason: "budget"}},
		{Kind: ReasonAborted, Cause: &Cause{Kind: "Odd\"kind"}},
		{Kind: ReasonAborted, Cause: &Cause{Kind: ""}},
		{Kind: ReasonAborted, Cause: &Cause{Kind: "parent"}, Error: &Failure{Message: "m"}},
		{Kind: ReasonAborted},
		{Kind: ReasonAborted, Error: &Failure{Message: "m"}},
	} {
		reason, err := r.marshalWire()
		require.NoError(t, err)
		want := `{"turn":7,"reason":` + string(reason) + `}`
		got, err := Encode(TurnEnd{Turn: 7, Reason: r})
		require.NoError(t, err)
		if r.Cause != nil || r.Error == nil { // a plain kind alone ignores Error, as before
			require.Equal(t, want, string(got), "%+v", r)
		}
		alone, err := r.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, string(got), `{"turn":7,"reason":`+string(alone)+`}`, "%+v", r)
	}
	_, err := Encode(TurnEnd{Turn: 1})
	require.Error(t, err, "a reason needs a kind")
}

// Decode refuses what is not the payload's shape and names the type.
func TestDecodeRefusesOtherShapes(t *testing.T) {
	for _, tc := range []struct{ typ, data, err string }{
		{TypeTurnEnd, `{"turn":1,"reason":{}}`, "decode turn/end"},
		{TypeTurnEnd, `{"turn":1,"reason":"completed"}`, "decode turn/end"},
		{TypeTurnStart, `[]`, "not a JSON object"},
		{TypeUserMessage, `null`, "not a JSON object"},
		{TypeAssistantChunk, `{"turn":1,"step":1,"chunk":{"type":"usage"}}`, "usage chunk lacks"},
		{TypeStepStart, `{"turn":"1"}`, "decode step/start"},
		{TypeSubagentDescriptor, `{}`, "no payload"},
		{"future/event", `{}`, "no payload"},
	} {
		_, err := Decode(tc.typ, []byte(tc.data))
		require.ErrorContains(t, err, tc.err, tc.typ+" "+tc.data)
	}
	_, err := DecodeAs[TurnEnd](TypeTurnStart, []byte(`{"turn":1}`))
	require.ErrorContains(t, err, "does not hold")
	s, err := DecodeAs[Step](TypeStepEnd, []byte(`{"turn":1,"step":2}`))
	require.NoError(t, err)
	require.Equal(t, Step{Turn: 1, Step: 2, Kind: TypeStepEnd}, s)
}

// A reason's text and code are found whichever error shape it has.
func TestReasonTextAndCode(t *testing.T) {
	for _, tc := range []struct {
		data, text, code string
	}{
		{`{"kind":"error","step":1,"message":"m","code":"C"}`, "m", "C"},
		{`{"kind":"error","step":1,"failure":{"message":"f","code":"AUTH"}}`, "f", "AUTH"},
		{`{"kind":"error","error":{"message":"e","code":"UNKNOWN"}}`, "e", "UNKNOWN"},
		{`{"kind":"completed"}`, "", ""},
	} {
		var r Reason
		require.NoError(t, json.Unmarshal([]byte(tc.data), &r))
		require.Equal(t, tc.text, r.Text())
		require.Equal(t, tc.code, r.ErrorCode())
		back, err := json.Marshal(r)
		require.NoError(t, err)
		require.Equal(t, tc.data, string(back))
	}
}

// OnSurface names exactly the message-carrying types.
func TestOnSurface(t *testing.T) {
	for _, typ := range []string{TypeUserMessage, TypeAssistantMessage, TypeToolResult, TypeSteeringMessage} {
		require.True(t, OnSurface(typ), typ)
	}
	for _, typ := range []string{TypeTurnStart, TypeTurnEnd, TypeToolCall, TypeAssistantChunk, TypeSubagentDescriptor, "x"} {
		require.False(t, OnSurface(typ), typ)
	}
}

// The payload defined in package event names the event type spelled here.
func TestEventsPayloadsNameTheseTypes(t *testing.T) {
	require.Equal(t, TypeUserMessage, event.UserMessage{}.EventType())
}

func TestKnownVocabulary(t *testing.T) {
	for _, typ := range []string{TypeTurnStart, TypeTurnEnd, TypeStepStart, TypeStepEnd, TypeUserMessage,
		TypeAssistantChunk, TypeAssistantMessage, TypeToolCall, TypeToolResult, TypeRequestHeader,
		TypeRequestContext, TypeLLMRetry, TypeSessionEndSeed, TypeSubagentDescriptor, TypeSteeringMessage,
		"session/title", "web/deepseek-search-llm-request"} {
		require.True(t, Known(typ), typ)
	}
	require.Len(t, known, 49, "the original's 48 types and steering/message")
	for _, typ := range []string{"future/thing", TypeSubagentStart, TypeRequestHeaderDelta, TypeModeSet, "text-chunks", ""} {
		require.False(t, Known(typ), typ)
	}
}

package vocab

import (
	"encoding/json"

	"github.com/dsh-actors/dsh-actors/event"
)

// Payload is the typed data of one event; EventType names the event type
// it is the payload of. Encode writes a Payload, Decode reads one.
type Payload interface {
	EventType() string
}

// SteeringMessage is steering/message {message}, a user message that
// arrived during a turn (older logs only).
type SteeringMessage struct {
	Message event.UserMessage `json:"message"`
}

// Trigger is what opened a turn: {kind, source?}.
type Trigger struct {
	Kind   string        `json:"kind"`
	Source *event.Source `json:"source,omitempty"`
}

// TurnStart is turn/start {turn, trigger?}. Turns count from 1 per log.
type TurnStart struct {
	Turn    int      `json:"turn"`
	Trigger *Trigger `json:"trigger,omitempty"`
}

// TurnEnd is turn/end {turn, reason}.
type TurnEnd struct {
	Turn   int    `json:"turn"`
	Reason Reason `json:"reason"`
}

// Step is step/start and step/end {turn, step}. Steps count from 1 in
// each turn; Kind tells the two apart.
type Step struct {
	Turn int    `json:"turn"`
	Step int    `json:"step"`
	Kind string `json:"-"` // TypeStepStart or TypeStepEnd
}

// Message is an assistant message: {role:"assistant", content, source, id}.
// Its content holds text, reasoning and tool-call blocks.
type Message struct {
	Role    string            `json:"role"` // always "assistant"
	Content []event.Block     `json:"content"`
	Source  event.ModelSource `json:"source"`
	ID      string            `json:"id"`
}

// AssistantMessage is assistant/message {turn, step, message, usage?,
// interrupted?}. Its envelope's sourceEventSeqs name the step's chunks.
type AssistantMessage struct {
	Turn        int     `json:"turn"`
	Step        int     `json:"step"`
	Message     Message `json:"message"`
	Usage       *Usage  `json:"usage,omitempty"`
	Interrupted bool    `json:"interrupted,omitempty"`
}

// AssistantChunk is assistant/chunk {turn, step, chunk}: one streamed
// piece of a model response, logged as the model client produced it.
type AssistantChunk struct {
	Turn  int   `json:"turn"`
	Step  int   `json:"step"`
	Chunk Chunk `json:"chunk"`
}

// ToolCall is tool/call {turn, step, callId, name, arguments}, logged when
// a call starts; Arguments is the model's raw argument string.
type ToolCall struct {
	Turn      int    `json:"turn"`
	Step      int    `json:"step"`
	CallID    string `json:"callId"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolResult is tool/result {turn, step, message, error?, meta?}. Its
// envelope's sourceEventSeqs name the call's tool/call.
type ToolResult struct {
	Turn    int                `json:"turn"`
	Step    int                `json:"step"`
	Message ToolResultMessage  `json:"message"`
	Error   *event.ToolFailure `json:"error,omitempty"`
	Meta    json.RawMessage    `json:"meta,omitempty"`
}

// ToolResultMessage is the user-role message carrying one tool result:
// {source:{kind:"tool", callId}, content:[one tool-result block],
// role:"user", id}.
type ToolResultMessage struct {
	Source  event.Source      `json:"source"`
	Content []ToolResultBlock `json:"content"`
	Role    string            `json:"role"` // always "user"
	ID      string            `json:"id"`
}

// ToolResultBlock is {type:"tool-result", toolCallId, content, isError}.
type ToolResultBlock struct {
	Type       string        `json:"type"`
	ToolCallID string        `json:"toolCallId"`
	Content    []event.Block `json:"content"`
	IsError    bool          `json:"isError"`
}

// RequestHeader is request/header {header, reason}: the model request's
// configuration, logged at a step's start when it is new (reason
// "initial" or "resume") or changed ("change").
type RequestHeader struct {
	Header Header `json:"header"`
	Reason string `json:"reason"`
}

// LLMRetry is llm/retry {turn, step, provider, mode, policyKey, retry,
// maxRetries?, delayMs, failure}: a failed step about to be retried.
// DelayMs is the policy's delay as computed, jitter and all, so it may have
// a fraction.
type LLMRetry struct {
	Turn       int     `json:"turn"`
	Step       int     `json:"step"`
	Provider   string  `json:"provider"`
	Mode       string  `json:"mode"`
	PolicyKey  string  `json:"policyKey"`
	Retry      int     `json:"retry"`
	MaxRetries *int    `json:"maxRetries,omitempty"`
	DelayMs    float64 `json:"delayMs"`
	Failure    Failure `json:"failure"`
}

// SessionEndSeed is session/end-seed {}: the end of a constructor seed.
type SessionEndSeed struct{}

// EventType names the payload's event type.
func (SteeringMessage) EventType() string { return TypeSteeringMessage }

// EventType names the payload's event type.
func (TurnStart) EventType() string { return TypeTurnStart }

// EventType names the payload's event type.
func (TurnEnd) EventType() string { return TypeTurnEnd }

// EventType is Kind: step/start or step/end (step/start when unset).
func (s Step) EventType() string {
	if s.Kind == TypeStepEnd {
		return TypeStepEnd
	}
	return TypeStepStart
}

// EventType names the payload's event type.
func (AssistantMessage) EventType() string { return TypeAssistantMessage }

// EventType names the payload's event type.
func (AssistantChunk) EventType() string { return TypeAssistantChunk }

// EventType names the payload's event type.
func (ToolCall) EventType() string { return TypeToolCall }

// EventType names the payload's event type.
func (ToolResult) EventType() string { return TypeToolResult }

// EventType names the payload's event type.
func (RequestHeader) EventType() string { return TypeRequestHeader }

// EventType names the payload's event type.
func (LLMRetry) EventType() string { return TypeLLMRetry }

// EventType names the payload's event type.
func (SessionEndSeed) EventType() string { return TypeSessionEndSeed }

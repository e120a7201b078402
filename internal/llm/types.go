package llm

import (
	"bytes"
	"encoding/json"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// RoleSystem is the role of the system prompt, the first message of the
// request's body (Request.System); a Message has one of the conversation
// roles of the event package.
const RoleSystem = "system"

// Message is one message of the conversation sent to the model. Role is
// event.RoleUser, event.RoleAssistant (its content may hold reasoning and
// tool-call blocks), event.RoleTool (a tool result: ToolCallID names the
// call, Content is what the model reads back) or RoleSystem.
type Message struct {
	Role       string
	Content    []event.Block
	ToolCallID string
}

// The reasoning efforts a request may ask for ("" leaves the client's
// default).
const (
	EffortOff  = "off"
	EffortHigh = "high"
	EffortMax  = "max"
)

// Request is one model call, fully assembled.
type Request struct {
	// Model is the wire model name.
	Model string
	// System is the system prompt ("" for none).
	System string
	// Messages is the conversation after the system prompt, in order.
	Messages []Message
	// Tools are offered to the model (none: the request has no tools).
	Tools []vocab.ToolSpec
	// MaxTokens caps the response (0: the client's default).
	MaxTokens int
	// ReasoningEffort is EffortOff, EffortHigh, EffortMax or "" (the
	// client's default).
	ReasoningEffort string
	// Temperature, when set, is sent as it is.
	Temperature *float64
	// Stop sequences, when set, end generation.
	Stop []string
	// SessionID names the calling session to the server (a header).
	SessionID string
	// OutputSchema, when set, asks an OpenAI-compatible server for a JSON
	// answer valid against it (response_format json_schema); DeepSeek's
	// API is not sent it.
	OutputSchema json.RawMessage
}

// marshal encodes v as compact JSON without HTML escaping.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

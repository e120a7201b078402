package event

import "encoding/json"

// Source says where a message came from. It is attribution only: it grants
// no authority. Kind is "user" (a person, or the initial continuable
// prompt), "coordinator" (a parent agent relaying work; SenderSessionID
// set), "tool" (a tool result; CallID set) or another kind an older or
// newer writer used.
type Source struct {
	Kind            string `json:"kind"`
	SenderSessionID string `json:"senderSessionId,omitempty"`
	RPCID           string `json:"rpcId,omitempty"`
	CallID          string `json:"callId,omitempty"`
}

// UserMessage is the payload of user/message, which is the message itself:
// {content, source, role:"user", id} in that key order.
type UserMessage struct {
	Content []Block `json:"content"`
	Source  Source  `json:"source"`
	Role    string  `json:"role"` // always "user"
	ID      string  `json:"id"`
}

// ModelSource attributes an assistant message: {kind:"model", provider,
// model, replayState?}.
type ModelSource struct {
	Kind        string          `json:"kind"`
	Provider    string          `json:"provider"`
	Model       string          `json:"model"`
	ReplayState json.RawMessage `json:"replayState,omitempty"`
}

// Usage is a model response's token counts (disjoint): {inputTokens,
// outputTokens, cacheReadTokens?, cacheWriteTokens?, reasoningTokens?}.
type Usage struct {
	InputTokens      int  `json:"inputTokens"`
	OutputTokens     int  `json:"outputTokens"`
	CacheReadTokens  *int `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens *int `json:"cacheWriteTokens,omitempty"`
	ReasoningTokens  *int `json:"reasoningTokens,omitempty"`
}

// ToolFailure names a tool failure: {name, code}.
type ToolFailure struct {
	Name string `json:"name"`
	Code string `json:"code"`
}

// Header is a request/header's {config, adapterDefaults?, system?, tools?};
// empty system and tools are omitted.
type Header struct {
	Config          Config           `json:"config"`
	AdapterDefaults *AdapterDefaults `json:"adapterDefaults,omitempty"`
	System          string           `json:"system,omitempty"`
	Tools           []ToolSpec       `json:"tools,omitempty"`
}

// Config is {provider, model, reasoningEffort?, maxTokens?}.
type Config struct {
	Provider        string `json:"provider"`
	Model           string `json:"model"`
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
	MaxTokens       int    `json:"maxTokens,omitempty"`
}

// AdapterDefaults marks the config fields the service filled in:
// {reasoningEffort?:true, maxTokens?:true}.
type AdapterDefaults struct {
	ReasoningEffort bool `json:"reasoningEffort,omitempty"`
	MaxTokens       bool `json:"maxTokens,omitempty"`
}

// ToolFilter restricts which tools an agent may use: only Allow (when
// set), never Deny. In a subagent descriptor a nil list is absent and
// omitted; a non-nil empty list is present and written as [].
type ToolFilter struct {
	Allow []string `json:"allow,omitzero"`
	Deny  []string `json:"deny,omitzero"`
}

// ToolSpec is one tool offered to the model: {name, description,
// parameters (a JSON schema)}.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// RequestContext is request/context {provider, model, contextWindow?},
// logged when it changed.
type RequestContext struct {
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	ContextWindow int    `json:"contextWindow,omitempty"`
}

// Failure is a model failure: {message, code, status?,
// providerRetryAfterMs?, requestId?}. Message is the full cause chain.
type Failure struct {
	Message              string `json:"message"`
	Code                 string `json:"code"`
	Status               int    `json:"status,omitempty"`
	ProviderRetryAfterMs int    `json:"providerRetryAfterMs,omitempty"`
	RequestID            string `json:"requestId,omitempty"`
}

// EventType is "user/message", the event type a UserMessage is logged
// under (the log vocabulary's TypeUserMessage, held equal by its tests).
func (UserMessage) EventType() string { return "user/message" }

// EventType is "request/context", the event type a RequestContext is
// logged under (the log vocabulary's TypeRequestContext, held equal by its
// tests).
func (RequestContext) EventType() string { return "request/context" }

// Error makes a Failure an error: an agent turn that fails with one (or
// with an error wrapping one) ends with turn/end {kind:"error", step,
// failure}.
func (f Failure) Error() string { return f.Message }

package vocab

import (
	"context"
	"encoding/json"

	"github.com/dsh-actors/dsh-actors/event"
)

// Transcript is the model's side of an open step: what the model agent
// logs beside agent.Step's message, tool calls and results. The runtime's
// steps implement it and the model agent reaches it by a type assertion on
// the agent.Step it is given. Its methods log in the order they are called,
// under the step's lock, and fail as agent.Step's do (ctx done, turn over,
// step ended, session refusing).
type Transcript interface {
	// RequestHeader logs request/header {header, reason} (reason
	// HeaderInitial, HeaderResume or HeaderChange).
	RequestHeader(ctx context.Context, header Header, reason string) error
	// RequestContext logs request/context.
	RequestContext(ctx context.Context, rc RequestContext) error
	// Chunk logs one assistant/chunk, as the model client produced it.
	Chunk(ctx context.Context, chunk Chunk) error
	// MessageWithUsage is agent.Step's Message with the response's usage
	// (nil for none) in the assistant/message.
	MessageWithUsage(ctx context.Context, content []event.Block, usage *Usage) (messageID string, err error)
	// Retry logs llm/retry for the step, after its End: the model call the
	// step made failed and is about to be retried (retry's turn and step
	// are set to the step's own).
	Retry(ctx context.Context, retry LLMRetry) error
}

// The attribution of assistant messages whose agent options leave the
// provider or model empty: the session format requires a non-empty
// provider and model on every assistant/message.
const (
	DefaultProvider = "scripted"
	DefaultModel    = "scripted"
)

// The request/header reasons.
const (
	HeaderInitial = "initial"
	HeaderResume  = "resume"
	HeaderChange  = "change"
)

// Usage is a model response's token counts (disjoint): {inputTokens,
// outputTokens, cacheReadTokens?, cacheWriteTokens?, reasoningTokens?}.
type Usage struct {
	InputTokens      int  `json:"inputTokens"`
	OutputTokens     int  `json:"outputTokens"`
	CacheReadTokens  *int `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens *int `json:"cacheWriteTokens,omitempty"`
	ReasoningTokens  *int `json:"reasoningTokens,omitempty"`
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

// EventType is TypeRequestContext.
func (RequestContext) EventType() string { return TypeRequestContext }

// Error makes a Failure an error: an agent turn that fails with one (or
// with an error wrapping one) ends with turn/end {kind:"error", step,
// failure}.
func (f Failure) Error() string { return f.Message }

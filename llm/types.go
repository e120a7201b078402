package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The content block types the harness knows.
const (
	BlockText       = "text"
	BlockReasoning  = "reasoning"
	BlockToolCall   = "tool-call"
	BlockToolResult = "tool-result"
)

// Block is one content block of a message. Which fields mean something
// depends on Type: Text for text and reasoning; ID, Name and Arguments (the
// model's raw JSON text) for a tool call; ToolCallID, Content and IsError
// for a tool result. A block of another type keeps its whole JSON in Raw
// and is passed through untouched (the wire request skips it).
type Block struct {
	Type       string
	Text       string
	ID         string
	Name       string
	Arguments  string
	ToolCallID string
	Content    []Block
	IsError    bool
	Raw        json.RawMessage
}

// TextBlock returns a text block.
func TextBlock(text string) Block { return Block{Type: BlockText, Text: text} }

// ToolCall returns a tool-call block.
func ToolCall(id, name, arguments string) Block {
	return Block{Type: BlockToolCall, ID: id, Name: name, Arguments: arguments}
}

// MarshalJSON writes the block with the original's key order: text and
// reasoning {type, text}, tool-call {type, id, name, arguments},
// tool-result {type, toolCallId, content, isError}; any other block is Raw.
func (b Block) MarshalJSON() ([]byte, error) {
	switch b.Type {
	case BlockText, BlockReasoning:
		return marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{b.Type, b.Text})
	case BlockToolCall:
		return marshal(struct {
			Type      string `json:"type"`
			ID        string `json:"id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		}{b.Type, b.ID, b.Name, b.Arguments})
	case BlockToolResult:
		content := b.Content
		if content == nil {
			content = []Block{}
		}
		return marshal(struct {
			Type       string  `json:"type"`
			ToolCallID string  `json:"toolCallId"`
			Content    []Block `json:"content"`
			IsError    bool    `json:"isError"`
		}{b.Type, b.ToolCallID, content, b.IsError})
	}
	if b.Raw == nil {
		return nil, fmt.Errorf("llm: a %q block needs its Raw JSON", b.Type)
	}
	return b.Raw, nil
}

// Message is one message of the conversation sent to the model: Role is
// "user" (whose content may hold tool results), "assistant" or "system".
type Message struct {
	Role    string
	Content []Block
}

// Tool is a tool offered to the model: its name, description and JSON
// Schema parameters (an object schema, sent as it is).
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
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
	Tools []Tool
	// MaxTokens caps the response (0: the server's default).
	MaxTokens int
	// ReasoningEffort is EffortOff, EffortHigh, EffortMax or "".
	ReasoningEffort string
	// Temperature, when set, is sent as it is.
	Temperature *float64
	// Stop sequences, when set, end generation.
	Stop []string
	// SessionID names the calling session to the server (a header).
	SessionID string
}

// Usage is the token accounting of one model call. Counts are disjoint:
// InputTokens excludes cached input, which CacheReadTokens reports.
type Usage struct {
	InputTokens      int64  `json:"inputTokens"`
	OutputTokens     int64  `json:"outputTokens"`
	CacheReadTokens  *int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens *int64 `json:"cacheWriteTokens,omitempty"`
	ReasoningTokens  *int64 `json:"reasoningTokens,omitempty"`
}

// Failure is the serializable record of a failed model call, as logged in
// finish chunks, llm/retry events and turn/end.
type Failure struct {
	Message              string  `json:"message"`
	Code                 string  `json:"code"`
	Status               int     `json:"status,omitempty"`
	ProviderRetryAfterMs float64 `json:"providerRetryAfterMs,omitempty"`
	RequestID            string  `json:"requestId,omitempty"`
}

// The kinds of FinishReason.
const (
	FinishStop      = "stop"
	FinishToolCalls = "tool-calls"
	FinishMaxTokens = "max-tokens"
	FinishError     = "error"
	FinishAborted   = "aborted"
)

// FinishReason says why a response stopped; Failure is set for the error
// and aborted kinds.
type FinishReason struct {
	Kind    string   `json:"kind"`
	Failure *Failure `json:"failure,omitempty"`
}

// The chunk types of a stream.
const (
	ChunkBlockStart     = "block-start"
	ChunkTextDelta      = "text-delta"
	ChunkReasoningDelta = "reasoning-delta"
	ChunkToolCallDelta  = "tool-call-delta"
	ChunkBlockEnd       = "block-end"
	ChunkUsage          = "usage"
	ChunkFinish         = "finish"
)

// Chunk is one element of a response stream. Index correlates a block's
// chunks. Which other fields mean something depends on Type: BlockType for
// block-start; Text for the text and reasoning deltas; ID (the call id so
// far, "" until known), Name (once HasName) and ArgumentsDelta for a
// tool-call delta; Block for block-end; Usage for usage; Reason for finish.
type Chunk struct {
	Type           string
	Index          int
	BlockType      string
	Text           string
	ID             string
	Name           string
	HasName        bool
	ArgumentsDelta string
	Block          Block
	Usage          Usage
	Reason         FinishReason
}

// MarshalJSON writes the chunk as the original logs it, keys in its order:
// block-start {type, index, blockType}, text-delta and reasoning-delta
// {type, index, text}, tool-call-delta {type, index, id, name?,
// argumentsDelta}, block-end {type, index, block}, usage {type, usage},
// finish {type, reason}.
func (c Chunk) MarshalJSON() ([]byte, error) {
	switch c.Type {
	case ChunkBlockStart:
		return marshal(struct {
			Type      string `json:"type"`
			Index     int    `json:"index"`
			BlockType string `json:"blockType"`
		}{c.Type, c.Index, c.BlockType})
	case ChunkTextDelta, ChunkReasoningDelta:
		return marshal(struct {
			Type  string `json:"type"`
			Index int    `json:"index"`
			Text  string `json:"text"`
		}{c.Type, c.Index, c.Text})
	case ChunkToolCallDelta:
		return marshal(struct {
			Type           string  `json:"type"`
			Index          int     `json:"index"`
			ID             string  `json:"id"`
			Name           *string `json:"name,omitempty"`
			ArgumentsDelta string  `json:"argumentsDelta"`
		}{c.Type, c.Index, c.ID, c.namePtr(), c.ArgumentsDelta})
	case ChunkBlockEnd:
		return marshal(struct {
			Type  string `json:"type"`
			Index int    `json:"index"`
			Block Block  `json:"block"`
		}{c.Type, c.Index, c.Block})
	case ChunkUsage:
		return marshal(struct {
			Type  string `json:"type"`
			Usage Usage  `json:"usage"`
		}{c.Type, c.Usage})
	case ChunkFinish:
		return marshal(struct {
			Type   string       `json:"type"`
			Reason FinishReason `json:"reason"`
		}{c.Type, c.Reason})
	}
	return nil, fmt.Errorf("llm: unknown chunk type %q", c.Type)
}

func (c Chunk) namePtr() *string {
	if !c.HasName {
		return nil
	}
	return &c.Name
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

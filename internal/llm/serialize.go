package llm

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// Wire shapes of the chat-completions request, keys in the order the
// original sends them; optional fields are left out, never null.
type (
	wireRequest struct {
		Model           string            `json:"model"`
		Messages        []wireMessage     `json:"messages"`
		Stream          bool              `json:"stream"`
		StreamOptions   wireStreamOptions `json:"stream_options"`
		Thinking        *wireThinking     `json:"thinking,omitempty"`
		ReasoningEffort string            `json:"reasoning_effort,omitempty"`
		Tools           []wireTool        `json:"tools,omitempty"`
		Temperature     *float64          `json:"temperature,omitempty"`
		MaxTokens       int               `json:"max_tokens,omitempty"`
		Stop            []string          `json:"stop,omitempty"`
		ResponseFormat  *wireFormat       `json:"response_format,omitempty"`
	}
	// wireFormat is response_format {type:"json_schema", json_schema:{name,
	// schema, strict}}.
	wireFormat struct {
		Type       string         `json:"type"`
		JSONSchema wireJSONSchema `json:"json_schema"`
	}
	wireJSONSchema struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict bool            `json:"strict"`
	}
	wireStreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	wireThinking struct {
		Type string `json:"type"`
	}
	wireTool struct {
		Type     string         `json:"type"`
		Function vocab.ToolSpec `json:"function"`
	}
	// wireMessage is one message: system and user {role, content}, tool
	// {role, tool_call_id, content}, assistant {role, content,
	// reasoning_content?, tool_calls?}.
	wireMessage struct {
		Role             string         `json:"role"`
		ToolCallID       string         `json:"tool_call_id,omitempty"`
		Content          string         `json:"content"`
		ReasoningContent string         `json:"reasoning_content,omitempty"`
		ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
	}
	wireToolCall struct {
		ID       string           `json:"id"`
		Type     string           `json:"type"`
		Function wireFunctionCall `json:"function"`
	}
	wireFunctionCall struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
)

// thinking resolves a request's reasoning effort against the client's
// default: for DeepSeek, off disables thinking, high and max enable it
// with that effort, and no effort at all sends neither field; other
// servers get no thinking field, and reasoning_effort "high" for high or
// max.
func thinking(effort, profile string) (*wireThinking, string, error) {
	switch {
	case effort == "":
		return nil, "", nil
	case effort != EffortOff && effort != EffortHigh && effort != EffortMax:
		return nil, "", newError(label(profile)+` does not support reasoning effort "`+effort+`"`, CodeUnsupportedEffort, nil)
	case profile == ProfileOpenAI && effort == EffortOff:
		return nil, "", nil
	case profile == ProfileOpenAI:
		return nil, EffortHigh, nil
	case effort == EffortOff:
		return &wireThinking{Type: "disabled"}, "", nil
	}
	return &wireThinking{Type: "enabled"}, effort, nil
}

// marshalRequest returns the chat-completions body for req as the server
// of profile takes it: always streaming with usage reported, the system
// prompt first, tool results as role "tool" messages after their
// assistant's tool_calls; an output schema as response_format json_schema
// for OpenAI-compatible servers only.
func marshalRequest(req Request, profile string) ([]byte, error) {
	think, effort, err := thinking(req.ReasoningEffort, profile)
	if err != nil {
		return nil, err
	}
	body := wireRequest{
		Model:           req.Model,
		Messages:        wireMessages(req.System, req.Messages, profile != ProfileOpenAI),
		Stream:          true,
		StreamOptions:   wireStreamOptions{IncludeUsage: true},
		Thinking:        think,
		ReasoningEffort: effort,
		Temperature:     req.Temperature,
		MaxTokens:       req.MaxTokens,
		Stop:            req.Stop,
	}
	for _, t := range req.Tools {
		body.Tools = append(body.Tools, wireTool{Type: "function", Function: t})
	}
	if len(req.OutputSchema) > 0 && profile == ProfileOpenAI {
		body.ResponseFormat = &wireFormat{Type: "json_schema",
			JSONSchema: wireJSONSchema{Name: "output", Schema: req.OutputSchema, Strict: true}}
	}
	return marshal(body)
}

// wireMessages serializes the conversation after the system prompt: a
// tool message's content is its text, "(no output)" when it has none;
// reasoning goes back only when withReasoning (DeepSeek's thinking mode).
func wireMessages(system string, messages []Message, withReasoning bool) []wireMessage {
	wire := make([]wireMessage, 0, len(messages)+1)
	if system != "" {
		wire = append(wire, wireMessage{Role: RoleSystem, Content: system})
	}
	for _, m := range messages {
		switch m.Role {
		case event.RoleAssistant:
			wire = append(wire, wireAssistant(m.Content, withReasoning))
		case event.RoleTool:
			wire = append(wire, wireMessage{Role: event.RoleTool, ToolCallID: m.ToolCallID, Content: toolOutput(m.Content)})
		default: // user and system messages: their joined text
			wire = appendUser(wire, m)
		}
	}
	return wire
}

// toolOutput is a tool result's text on the wire: "(no output)" for none.
func toolOutput(content []event.Block) string {
	if output := event.TextOf(content); output != "" {
		return output
	}
	return "(no output)"
}

// appendUser appends a user (or system) message: its joined text, and its
// tool-result blocks (a prompt may carry them) as the original sends them,
// role "tool" messages, when that order is one a strict server (llama.cpp,
// vLLM, OpenAI's) takes. So a block answering a tool call still open at
// the wire's end (see openCalls) goes first, as a "tool" message; any
// other block's output joins the text where the block stands, as a tool
// message there would be refused. The text goes as one message when it is
// not empty or no block went as a tool message.
func appendUser(wire []wireMessage, m Message) []wireMessage {
	if !slices.ContainsFunc(m.Content, func(b event.Block) bool { return b.Type == event.BlockToolResult }) {
		return append(wire, wireMessage{Role: m.Role, Content: event.TextOf(m.Content)})
	}
	open := openCalls(wire)
	var text strings.Builder
	answered := 0
	for _, b := range m.Content {
		switch b.Type {
		case event.BlockText:
			text.WriteString(b.Text)
		case event.BlockToolResult:
			var result vocab.ToolResultBlock
			_ = json.Unmarshal(b.Raw, &result) // a malformed block has no call to answer and no text
			if !open[result.ToolCallID] {
				text.WriteString(toolOutput(result.Content))
				continue
			}
			delete(open, result.ToolCallID)
			wire = append(wire, wireMessage{Role: event.RoleTool, ToolCallID: result.ToolCallID, Content: toolOutput(result.Content)})
			answered++
		}
	}
	if text.Len() > 0 || answered == 0 {
		wire = append(wire, wireMessage{Role: m.Role, Content: text.String()})
	}
	return wire
}

// openCalls are the ids of the tool calls a "tool" message may answer
// next: those of the assistant message the wire ends with, past the tool
// messages after it, that none of them answered.
func openCalls(wire []wireMessage) map[string]bool {
	i := len(wire) - 1
	answered := map[string]bool{}
	for ; i >= 0 && wire[i].Role == event.RoleTool; i-- {
		answered[wire[i].ToolCallID] = true
	}
	if i < 0 || wire[i].Role != event.RoleAssistant {
		return nil
	}
	open := map[string]bool{}
	for _, c := range wire[i].ToolCalls {
		if !answered[c.ID] {
			open[c.ID] = true
		}
	}
	return open
}

// wireAssistant serializes an assistant message: its text ("" rather than
// null), its tool calls, and its reasoning only beside tool calls (thinking
// mode requires it back there, and nowhere else).
func wireAssistant(content []event.Block, withReasoning bool) wireMessage {
	m := wireMessage{Role: event.RoleAssistant, Content: event.TextOf(content)}
	var reasoning strings.Builder
	for _, b := range content {
		if b.Type == event.BlockReasoning {
			reasoning.WriteString(b.Text)
		}
		if call, ok := b.ToolCall(); ok {
			m.ToolCalls = append(m.ToolCalls, wireToolCall{ID: call.ID, Type: "function",
				Function: wireFunctionCall{Name: call.Name, Arguments: call.Arguments}})
		}
	}
	if len(m.ToolCalls) > 0 && withReasoning {
		m.ReasoningContent = reasoning.String()
	}
	return m
}

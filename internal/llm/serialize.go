package llm

import (
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
// default: off disables thinking, high and max enable it with that effort,
// and no effort at all sends neither field.
func thinking(effort string) (*wireThinking, string, error) {
	switch effort {
	case "":
		return nil, "", nil
	case EffortOff:
		return &wireThinking{Type: "disabled"}, "", nil
	case EffortHigh, EffortMax:
		return &wireThinking{Type: "enabled"}, effort, nil
	}
	return nil, "", newError(`DeepSeek does not support reasoning effort "`+effort+`"`, CodeUnsupportedEffort, nil)
}

// marshalRequest returns the chat-completions body for req: always
// streaming with usage reported, the system prompt first, tool results as
// role "tool" messages after their assistant's tool_calls.
func marshalRequest(req Request) ([]byte, error) {
	think, effort, err := thinking(req.ReasoningEffort)
	if err != nil {
		return nil, err
	}
	body := wireRequest{
		Model:           req.Model,
		Messages:        wireMessages(req.System, req.Messages),
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
	return marshal(body)
}

// wireMessages serializes the conversation after the system prompt: a
// tool message's content is its text, "(no output)" when it has none.
func wireMessages(system string, messages []Message) []wireMessage {
	wire := make([]wireMessage, 0, len(messages)+1)
	if system != "" {
		wire = append(wire, wireMessage{Role: RoleSystem, Content: system})
	}
	for _, m := range messages {
		switch m.Role {
		case event.RoleAssistant:
			wire = append(wire, wireAssistant(m.Content))
		case event.RoleTool:
			output := event.TextOf(m.Content)
			if output == "" {
				output = "(no output)"
			}
			wire = append(wire, wireMessage{Role: event.RoleTool, ToolCallID: m.ToolCallID, Content: output})
		default: // user and system messages: their joined text
			wire = append(wire, wireMessage{Role: m.Role, Content: event.TextOf(m.Content)})
		}
	}
	return wire
}

// wireAssistant serializes an assistant message: its text ("" rather than
// null), its tool calls, and its reasoning only beside tool calls (thinking
// mode requires it back there, and nowhere else).
func wireAssistant(content []event.Block) wireMessage {
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
	if len(m.ToolCalls) > 0 {
		m.ReasoningContent = reasoning.String()
	}
	return m
}

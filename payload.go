package dsh

import (
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// Payload reads e's data by its type: user/message as an
// event.UserMessage, assistant/message as an event.AssistantMessage, an
// assistant/chunk streaming text or reasoning as an event.Delta, tool/call,
// tool/result, llm/retry and turn/end as event.ToolCall, event.ToolResult,
// event.Retry and event.TurnEnd. Any other event (a step's start, a request
// header, another chunk, a subagent descriptor, a type the runtime does not
// know) is nil with a nil error; data that is not its type's shape is an
// error naming the type. It does not block.
func (e Event) Payload() (event.Payload, error) {
	if !readable[e.Type] {
		return nil, nil
	}
	p, err := vocab.Decode(e.Type, e.Data)
	if err != nil {
		return nil, err
	}
	switch v := p.(type) {
	case event.UserMessage:
		return v, nil
	case vocab.AssistantMessage:
		return event.AssistantMessage{Content: v.Message.Content}, nil
	case vocab.AssistantChunk:
		return deltaOf(v.Chunk), nil
	case vocab.ToolCall:
		return event.ToolCall{CallID: v.CallID, Name: v.Name, Arguments: v.Arguments}, nil
	case vocab.ToolResult:
		return toolResultOf(v), nil
	case vocab.LLMRetry:
		return event.Retry{Attempt: v.Retry, MaxRetries: v.MaxRetries, DelayMs: v.DelayMs,
			Message: v.Failure.Message, Code: v.Failure.Code}, nil
	case vocab.TurnEnd:
		return event.TurnEnd{Turn: v.Turn, Reason: v.Reason.Kind, Message: v.Reason.Text(), Code: v.Reason.ErrorCode()}, nil
	}
	return nil, nil
}

// readable are the event types Payload reads.
var readable = map[string]bool{
	vocab.TypeUserMessage: true, vocab.TypeAssistantMessage: true, vocab.TypeAssistantChunk: true,
	vocab.TypeToolCall: true, vocab.TypeToolResult: true, vocab.TypeLLMRetry: true, vocab.TypeTurnEnd: true,
}

// deltaOf is a text or reasoning delta's event.Delta, nil for any other
// chunk.
func deltaOf(c vocab.Chunk) event.Payload {
	switch c.Type {
	case vocab.ChunkTextDelta:
		return event.Delta{Text: c.Text}
	case vocab.ChunkReasoningDelta:
		return event.Delta{Text: c.Text, Reasoning: true}
	}
	return nil
}

// toolResultOf is r's results in order.
func toolResultOf(r vocab.ToolResult) event.ToolResult {
	results := make([]event.ToolOutput, len(r.Message.Content))
	for i, b := range r.Message.Content {
		results[i] = event.ToolOutput{CallID: b.ToolCallID, Content: b.Content, IsError: b.IsError}
	}
	return event.ToolResult{Results: results}
}

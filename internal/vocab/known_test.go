package vocab

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/event"
)

// Every event type the runtime appends must be one a reader knows: a log
// holding any other type without an ignorable mark is refused on read.
// The runtime appends only these payloads and the markers the session
// store and the spawner write (session/end-seed, subagent/descriptor).
func TestEveryTypeTheRuntimeWritesIsKnown(t *testing.T) {
	written := []Payload{
		TurnStart{}, TurnEnd{}, Step{Kind: TypeStepStart}, Step{Kind: TypeStepEnd},
		AssistantMessage{}, AssistantChunk{}, ToolCall{}, ToolResult{}, RequestHeader{},
		RequestContext{}, LLMRetry{}, SessionEndSeed{},
		event.UserMessage{}, event.AssistantMessage{}, event.Delta{}, event.ToolCall{},
		event.ToolResult{}, event.Retry{}, event.TurnEnd{},
	}
	for _, p := range written {
		require.True(t, Known(p.EventType()), "%T writes %s", p, p.EventType())
		_, err := Decode(p.EventType(), []byte(`{}`))
		require.NotErrorIs(t, err, ErrUnknownType, "%s has a payload here", p.EventType())
	}
	require.True(t, Known(TypeSubagentDescriptor))
}

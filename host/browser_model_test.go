package host

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// TestBrowserShowsModelSteps feeds a model turn's events into an open
// conversation: streamed text shows as it arrives, a tool call is one
// folded item its result completes, the assistant message replaces the
// streamed text, a failed turn shows its reason, and a retried call the
// retry it waits for.
func TestBrowserShowsModelSteps(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStack(t)
	p := openPage(t, chromium)
	id := openNewSession(p, s, "en")
	live := s.rt.Actors().Registry().Get(id).Session()
	appendAll := func(payloads ...vocab.Payload) {
		for _, pl := range payloads {
			data, err := vocab.Encode(pl)
			require.NoError(t, err)
			var opts []session.AppendOption
			if vocab.OnSurface(pl.EventType()) {
				opts = append(opts, session.Surface())
			}
			_, err = live.Append(pl.EventType(), data, opts...)
			require.NoError(t, err)
		}
	}
	delta := func(text string) vocab.Payload {
		return vocab.AssistantChunk{Turn: 1, Step: 1, Chunk: vocab.Chunk{Type: vocab.ChunkTextDelta, Text: text}}
	}
	call := event.ToolCallBlock{ID: "call_1", Name: "list_agents", Arguments: "{}"}
	appendAll(
		vocab.TurnStart{Turn: 1},
		event.UserMessage{Content: event.Text("list them"), Source: event.Source{Kind: event.SourceUser}, Role: event.RoleUser, ID: "m1"},
		vocab.Step{Turn: 1, Step: 1},
		delta("Let me "), delta("look"),
	)
	p.until(`document.querySelector('.message.assistant.streaming .body')?.textContent === 'Let me look'`)
	p.shot("model-streaming")

	appendAll(
		vocab.AssistantMessage{Turn: 1, Step: 1, Message: vocab.Message{Role: event.RoleAssistant,
			Content: []event.Block{event.Text("Let me look")[0], call.Block()},
			Source:  event.ModelSource{Kind: event.SourceModel, Provider: "p", Model: "m"}, ID: "a1"}},
		vocab.ToolCall{Turn: 1, Step: 1, CallID: call.ID, Name: call.Name, Arguments: call.Arguments},
	)
	p.until(`document.querySelector('.message.tool[data-call="call_1"] .tool-status')?.textContent === 'running'`)
	require.Zero(t, eval[int](p, `document.querySelectorAll('.message.streaming').length`), "the message replaced the streamed text")
	appendAll(
		vocab.ToolResult{Turn: 1, Step: 1, Message: vocab.ToolResultMessage{
			Source: event.Source{Kind: event.SourceTool, CallID: call.ID}, Role: event.RoleUser, ID: "r1",
			Content: []vocab.ToolResultBlock{{Type: event.BlockToolResult, ToolCallID: call.ID, Content: event.Text("(no subagents)")}},
		}},
		vocab.Step{Turn: 1, Step: 1, Kind: vocab.TypeStepEnd},
		vocab.TurnEnd{Turn: 1, Reason: vocab.Reason{Kind: vocab.ReasonError, Step: 2,
			Failure: &vocab.Failure{Message: "Authentication Fails", Code: "AUTH"}}},
	)
	p.until(`document.querySelector('.message.tool[data-call="call_1"] .tool-status')?.textContent === 'done'`)
	require.Equal(t, "(no subagents)", eval[string](p, `document.querySelector('.message.tool .tool-result').textContent`))
	require.False(t, eval[bool](p, `document.querySelector('.message.tool details').open`), "folded until expanded")
	eval[bool](p, `(document.querySelector('.message.tool summary').click(), true)`)
	p.until(`document.querySelector('.message.tool details').open`)
	p.until(`[...document.querySelectorAll('.message.outcome.failed')].some((n) => n.textContent.includes('Authentication Fails'))`)
	p.shot("model-tool-and-failure")
	appendAll(vocab.TurnStart{Turn: 2},
		event.UserMessage{Content: event.Text("again"), Source: event.Source{Kind: event.SourceUser}, Role: event.RoleUser, ID: "m2"})
	p.until(`[...document.querySelectorAll('.message.user .body')].some((b) => b.textContent === 'again')`)
	require.True(t, eval[bool](p, `document.querySelector('.message.tool details').open`), "a redraw keeps it unfolded")

	empty := vocab.Failure{Message: "model returned a completed response with no content", Code: "EMPTY_RESPONSE"}
	two := 2
	appendAll(vocab.Step{Turn: 2, Step: 1}, vocab.Step{Turn: 2, Step: 1, Kind: vocab.TypeStepEnd},
		vocab.LLMRetry{Turn: 2, Step: 1, Provider: "p", Mode: "normal", PolicyKey: "k", Retry: 1, MaxRetries: &two, DelayMs: 487.6, Failure: empty},
		vocab.TurnEnd{Turn: 2, Reason: vocab.Reason{Kind: vocab.ReasonError, Step: 1, Failure: &empty}},
		vocab.TurnStart{Turn: 3, Trigger: &vocab.Trigger{Kind: vocab.TriggerRetry}})
	p.until(`document.querySelector('.message.note.retry')?.textContent === 'Retry 1 of 2 in 488 ms: model returned a completed response with no content'`)
	p.shot("model-retry")
}

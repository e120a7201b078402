package host

import (
	"context"
	"errors"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// TestBrowserShowsModelSteps runs a model turn's steps, as the model
// agent logs them, in an open conversation: streamed text shows as it
// arrives, a tool call is one folded item its result completes, the
// assistant message replaces the streamed text, a failed turn shows its
// reason, and a retried call the retry it waits for.
func TestBrowserShowsModelSteps(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStack(t)
	p := openPage(t, chromium)
	id := openNewSession(p, s, "en")
	ctx := context.Background()
	streamed, called, asked := make(chan struct{}), make(chan struct{}), make(chan struct{})
	call := event.ToolCallBlock{ID: "call_1", Name: "list_agents", Arguments: "{}"}
	empty := vocab.Failure{Message: "model returned a completed response with no content", Code: "EMPTY_RESPONSE"}
	two := 2
	s.hooks.script(id,
		func(ctx context.Context, host agent.Host, _ event.UserMessage) (agent.StopReason, error) {
			step, transcript, err := modelStep(ctx, host)
			if err != nil {
				return agent.Error, err
			}
			for _, text := range []string{"Let me ", "look"} {
				err = errors.Join(err, transcript.Chunk(ctx, vocab.Chunk{Type: vocab.ChunkTextDelta, Text: text}))
			}
			if err := released(ctx, streamed); err != nil {
				return agent.Aborted, err
			}
			_, messageErr := step.Message(ctx, []event.Block{event.Text("Let me look")[0], call.Block()})
			err = errors.Join(err, messageErr, step.ToolCall(ctx, call))
			if err := released(ctx, called); err != nil {
				return agent.Aborted, err
			}
			_, resultErr := step.ToolResult(ctx, agent.ToolResult{CallID: call.ID, Content: event.Text("(no subagents)")})
			if err = errors.Join(err, resultErr, step.End(ctx)); err != nil {
				return agent.Error, err
			}
			return agent.Error, vocab.Failure{Message: "Authentication Fails", Code: "AUTH"}
		},
		func(ctx context.Context, host agent.Host, _ event.UserMessage) (agent.StopReason, error) {
			if err := released(ctx, asked); err != nil {
				return agent.Aborted, err
			}
			step, transcript, err := modelStep(ctx, host)
			if err != nil {
				return agent.Error, err
			}
			err = step.End(ctx)
			err = errors.Join(err, transcript.Retry(ctx, vocab.LLMRetry{Provider: "p", Mode: "normal", PolicyKey: "k",
				Retry: 1, MaxRetries: &two, DelayMs: 487.6, Failure: empty}))
			if err != nil {
				return agent.Error, err
			}
			return agent.Retry, empty
		},
		func(context.Context, agent.Host, event.UserMessage) (agent.StopReason, error) {
			return agent.Completed, nil // the retried call
		})

	_, err := s.rt.PromptSession(ctx, id, event.Text("list them"), userSource)
	require.NoError(t, err)
	p.until(`document.querySelector('.message.assistant.streaming .body')?.textContent === 'Let me look'`)
	p.shot("model-streaming")

	close(streamed)
	p.until(`document.querySelector('.message.tool[data-call="call_1"] .tool-status')?.textContent === 'running'`)
	require.Zero(t, eval[int](p, `document.querySelectorAll('.message.streaming').length`), "the message replaced the streamed text")
	close(called)
	p.until(`document.querySelector('.message.tool[data-call="call_1"] .tool-status')?.textContent === 'done'`)
	require.Equal(t, "(no subagents)", eval[string](p, `document.querySelector('.message.tool .tool-result').textContent`))
	require.False(t, eval[bool](p, `document.querySelector('.message.tool details').open`), "folded until expanded")
	eval[bool](p, `(document.querySelector('.message.tool summary').click(), true)`)
	p.until(`document.querySelector('.message.tool details').open`)
	p.until(`[...document.querySelectorAll('.message.outcome.failed')].some((n) => n.textContent.includes('Authentication Fails'))`)
	p.shot("model-tool-and-failure")

	_, err = s.rt.PromptSession(ctx, id, event.Text("again"), userSource)
	require.NoError(t, err)
	p.until(`[...document.querySelectorAll('.message.user .body')].some((b) => b.textContent === 'again')`)
	require.True(t, eval[bool](p, `document.querySelector('.message.tool details').open`), "a redraw keeps it unfolded")
	close(asked)
	p.until(`document.querySelector('.message.note.retry')?.textContent === 'Retry 1 of 2 in 488 ms: model returned a completed response with no content'`)
	p.shot("model-retry")
	waitIdle(t, s.rt, id, "again (retried)")
}

// released waits until the test closes release, or ctx ends (the stack
// closing on a failed test).
func released(ctx context.Context, release <-chan struct{}) error {
	select {
	case <-release:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// modelStep opens a step of host as the model agent does: one that also
// logs the model's transcript (its chunks, its retries).
func modelStep(ctx context.Context, host agent.Host) (agent.Step, vocab.Transcript, error) {
	step, err := host.Step(ctx)
	if err != nil {
		return nil, nil, err
	}
	transcript, ok := step.(vocab.Transcript)
	if !ok {
		return nil, nil, errors.New("the runtime's step logs no model transcript")
	}
	return step, transcript, nil
}

package activation

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// failingStep opens a step, ends it and returns agent.Retry with an empty
// response's failure, as the model agent does once it has waited.
func failingStep(ctx context.Context, host agent.Host) (agent.StopReason, error) {
	s, err := host.Step(ctx)
	if err != nil {
		return agent.Error, err
	}
	if err := s.End(ctx); err != nil {
		return agent.Error, err
	}
	return agent.Retry, vocab.Failure{Message: "model returned a completed response with no content", Code: "EMPTY_RESPONSE"}
}

// TestARetriedTurnIsFollowedByARetryTurn: the turn ends in error naming
// the step it ended, then a turn with trigger retry and no user/message
// runs the same message; steps restart at 1.
func TestARetriedTurnIsFollowedByARetryTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen []event.UserMessage
		a := start(t, agent.Func(func(ctx context.Context, host agent.Host, msg event.UserMessage) (agent.StopReason, error) {
			seen = append(seen, msg)
			if len(seen) == 1 {
				require.NoError(t, host.Say(ctx, event.Text("thinking")))
				return failingStep(ctx, host)
			}
			return agent.Completed, host.Say(ctx, event.Text("done"))
		}))
		id := followup(t, a, "go")
		require.NoError(t, a.WhenIdle(bg))
		require.Equal(t, []string{
			`turn/start {"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}`,
			`user/message {"content":[{"type":"text","text":"go"}],"source":{"kind":"user"},"role":"user","id":"ID"} surface="append"`,
			`step/start {"turn":1,"step":1}`,
			`assistant/message {"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"thinking"}],"source":{"kind":"model","provider":"test","model":"m1"},"id":"ID"}} surface="append"`,
			`step/end {"turn":1,"step":1}`,
			`step/start {"turn":1,"step":2}`,
			`step/end {"turn":1,"step":2}`,
			`turn/end {"turn":1,"reason":{"kind":"error","step":2,"failure":{"message":"model returned a completed response with no content","code":"EMPTY_RESPONSE"}}}`,
			`turn/start {"turn":2,"trigger":{"kind":"retry"}}`,
			`step/start {"turn":2,"step":1}`,
			`assistant/message {"turn":2,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"done"}],"source":{"kind":"model","provider":"test","model":"m1"},"id":"ID"}} surface="append"`,
			`step/end {"turn":2,"step":1}`,
			`turn/end {"turn":2,"reason":{"kind":"completed"}}`,
		}, envelopes(a.Session().Events()))
		require.Len(t, seen, 2)
		require.Equal(t, id, seen[1].ID, "the retry turn runs the same message")
	})
}

// TestRetryWithoutAFailureIsAFailedTurn: agent.Retry with a nil error
// asks for nothing; the turn fails as an unknown stop reason does.
func TestRetryWithoutAFailureIsAFailedTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := start(t, agent.Func(func(context.Context, agent.Host, event.UserMessage) (agent.StopReason, error) {
			return agent.Retry, nil
		}))
		followup(t, a, "go")
		require.NoError(t, a.WhenIdle(bg))
		require.Equal(t, []string{`{"turn":1,"reason":{"kind":"error","step":1,"message":"turn ended with stop reason \"retry\""}}`}, turnEnds(a))
	})
}

// TestACancelledRetriedTurnOpensNoRetryTurn: a turn cancelled before it
// returns Retry ends aborted and the chain stops; the queue runs on.
func TestACancelledRetriedTurnOpensNoRetryTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		running, cancelled := make(chan struct{}), make(chan struct{})
		calls := 0
		a := start(t, agent.Func(func(ctx context.Context, host agent.Host, msg event.UserMessage) (agent.StopReason, error) {
			calls++
			if event.TextOf(msg.Content) == "next" {
				return agent.Completed, nil
			}
			close(running)
			<-cancelled
			return failingStep(context.WithoutCancel(ctx), host)
		}))
		followup(t, a, "go")
		followup(t, a, "next")
		<-running
		a.Cancel(agent.CancelCause{Kind: agent.CauseUser}, true)
		close(cancelled)
		require.NoError(t, a.WhenIdle(bg))
		require.Equal(t, 2, calls)
		require.Equal(t, []string{`{"turn":1,"reason":{"kind":"aborted"}}`, `{"turn":2,"reason":{"kind":"completed"}}`}, turnEnds(a))
		require.NotContains(t, logOf(a), `turn/start {"turn":2,"trigger":{"kind":"retry"}}`)
	})
}

// TestARetryChainIsOneFIFOTurn: a message accepted while a chain runs
// waits until its last turn has ended; nothing interleaves. Run with -race.
func TestARetryChainIsOneFIFOTurn(t *testing.T) {
	bounded := testkit.Context(t)
	var mu sync.Mutex
	var order []string
	retried := map[string]bool{}
	accepted := make(chan struct{})
	a := start(t, agent.Func(func(ctx context.Context, host agent.Host, msg event.UserMessage) (agent.StopReason, error) {
		text := event.TextOf(msg.Content)
		mu.Lock()
		order = append(order, text)
		first := !retried[text]
		retried[text] = true
		mu.Unlock()
		if text == "a" && first {
			<-accepted // "b" is queued behind the chain
			return failingStep(ctx, host)
		}
		return agent.Completed, nil
	}))
	followup(t, a, "a")
	followup(t, a, "b")
	close(accepted)
	require.NoError(t, a.WhenIdle(bounded))
	require.Equal(t, []string{"a", "a", "b"}, order)
	starts := []string{}
	for _, line := range logOf(a) {
		if len(line) > 10 && line[:10] == "turn/start" {
			starts = append(starts, line)
		}
	}
	require.Equal(t, []string{
		`turn/start {"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}`,
		`turn/start {"turn":2,"trigger":{"kind":"retry"}}`,
		`turn/start {"turn":3,"trigger":{"kind":"message","source":{"kind":"user"}}}`,
	}, starts)
}

// TestADisposalAfterTheFailedTurnEndedOpensNoRetryTurn: a disposal that
// begins once the retried turn has logged its turn/end, before the retry
// turn opens, stops the chain there: no retry turn is opened only to end
// disposed, and the agent is not called again.
func TestADisposalAfterTheFailedTurnEndedOpensNoRetryTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sessions := session.NewSessions(nil)
		live, err := sessions.Create(bg, session.Header{ID: "agent-1"}, nil)
		require.NoError(t, err)
		calls := 0
		a := startOn(t, live, agent.Func(func(ctx context.Context, host agent.Host, _ event.UserMessage) (agent.StopReason, error) {
			calls++
			if calls > 1 {
				return agent.Completed, host.Say(ctx, event.Text("retried"))
			}
			return failingStep(ctx, host)
		}), nil)
		var once sync.Once
		stop := sessions.Subscribe(func(c session.Change) {
			if c.Kind == session.Appended && c.Event.Type == vocab.TypeTurnEnd {
				once.Do(func() { a.inbox.Close(agent.CancelCause{Kind: agent.CauseDisposed}) }) // Dispose's first step, as the failed turn ends
			}
		})
		defer stop()
		followup(t, a, "go")
		require.NoError(t, a.WhenIdle(bg))
		require.Equal(t, 1, calls, "the agent runs no retry turn")
		require.NotContains(t, logOf(a), `turn/start {"turn":2,"trigger":{"kind":"retry"}}`)
		require.Equal(t, []string{`{"turn":1,"reason":{"kind":"error","step":1,"failure":{"message":"model returned a completed response with no content","code":"EMPTY_RESPONSE"}}}`}, turnEnds(a))
	})
}

package activation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/actorkit"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var bg = context.Background()

// start runs impl as an agent over a fresh memory-only session. The
// activation is disposed when the test ends.
func start(t *testing.T, impl agent.Agent, options ...func(*Config)) *Activation {
	t.Helper()
	return startSeeded(t, impl, nil, options...)
}

func startSeeded(t *testing.T, impl agent.Agent, seed []session.Event, options ...func(*Config)) *Activation {
	t.Helper()
	live, err := session.NewSessions(nil).Create(bg, session.Header{ID: "agent-1"}, seed)
	require.NoError(t, err)
	return startOn(t, live, impl, nil, options...)
}

// startOn starts impl as agent-1 over live in a fresh actor system; when
// the test ends, cleanup runs first, then the activation is disposed and
// the system shut down.
func startOn(t *testing.T, live *session.Live, impl agent.Agent, cleanup func(), options ...func(*Config)) *Activation {
	t.Helper()
	system := actorkit.NewSystem(nil)
	cfg := Config{Agent: impl, Session: live, Actors: actorkit.Host{System: system}, Provider: "test", Model: "m1"}
	for _, option := range options {
		option(&cfg)
	}
	a, err := Start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		if cleanup != nil {
			cleanup()
		}
		require.NoError(t, a.Dispose(bg))
		system.Shutdown()
	})
	return a
}

func followup(t *testing.T, a *Activation, text string) string {
	t.Helper()
	id, err := a.Followup(bg, event.UserMessage{Content: event.Text(text), Source: event.Source{Kind: "user"}})
	require.NoError(t, err)
	return id
}

// logOf renders the session as "type data" lines, dropping the random
// assistant message ids.
func logOf(a *Activation) []string {
	var lines []string
	for _, e := range a.Session().Events() {
		data := string(e.Data)
		if i := strings.Index(data, `,"id":"`); i >= 0 && e.Type == "assistant/message" {
			data = data[:i] + "}}"
		}
		lines = append(lines, e.Type+" "+data)
	}
	return lines
}

func typesOf(a *Activation) []string {
	var types []string
	for _, e := range a.Session().Events() {
		types = append(types, e.Type)
	}
	return types
}

// turnEnds returns the data of every turn/end event.
func turnEnds(a *Activation) []string {
	var ends []string
	for _, e := range a.Session().Events() {
		if e.Type == "turn/end" {
			ends = append(ends, string(e.Data))
		}
	}
	return ends
}

func TestTurnLogsTheOriginalEventShapes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := start(t, agent.Scripted(agent.Options{}))
		id := followup(t, a, "reply hello")
		require.NoError(t, a.WhenIdle(bg))
		require.Equal(t, []string{
			`turn/start {"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}`,
			`user/message {"content":[{"type":"text","text":"reply hello"}],"source":{"kind":"user"},"role":"user","id":"` + id + `"}`,
			`step/start {"turn":1,"step":1}`,
			`assistant/message {"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"source":{"kind":"model","provider":"test","model":"m1"}}}`,
			`step/end {"turn":1,"step":1}`,
			`turn/end {"turn":1,"reason":{"kind":"completed"}}`,
		}, logOf(a))
		for _, e := range a.Session().Events() {
			surface := e.Type == "user/message" || e.Type == "assistant/message"
			require.Equal(t, surface, string(e.SurfaceOp) == `"append"`, e.Type)
		}
	})
}

func TestFollowupDuringTurnBecomesTheNextTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var seen []string
		a := start(t, agent.Func(func(ctx context.Context, host agent.Host, msg event.UserMessage) (agent.StopReason, error) {
			seen = append(seen, msg.Content[0].Text)
			if msg.Content[0].Text == "first" {
				<-release
			}
			return agent.Completed, host.Say(ctx, event.Text("done "+msg.Content[0].Text))
		}))
		followup(t, a, "first")
		synctest.Wait()
		followup(t, a, "second")
		synctest.Wait()
		require.Equal(t, []string{"first"}, seen, "the follow-up does not reach the running turn")
		require.Equal(t, inbox.Running, a.Status())
		close(release)
		require.NoError(t, a.WhenIdle(bg))
		require.Equal(t, []string{"first", "second"}, seen)
		require.Equal(t, []string{
			"turn/start", "user/message", "step/start", "assistant/message", "step/end", "turn/end",
			"turn/start", "user/message", "step/start", "assistant/message", "step/end", "turn/end",
		}, typesOf(a))
		require.Equal(t, inbox.Idle, a.Status())
	})
}

func TestCancelKeepInboxAbortsTheTurnAndRunsTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := start(t, agent.Scripted(agent.Options{}))
		followup(t, a, "sleep 1h\nreply never")
		followup(t, a, "reply kept")
		synctest.Wait()
		a.Cancel(agent.CancelCause{Kind: agent.CauseUser}, true)
		require.NoError(t, a.WhenIdle(bg))
		require.Equal(t, []string{
			`{"turn":1,"reason":{"kind":"aborted"}}`,
			`{"turn":2,"reason":{"kind":"completed"}}`,
		}, turnEnds(a))
	})
}

func TestCancelWithoutKeepInboxDiscardsTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var discarded []string
		a := start(t, agent.Scripted(agent.Options{}), func(c *Config) {
			c.Observer = func(e inbox.Event) {
				if e.Type == inbox.Discard {
					discarded = append(discarded, e.MessageID)
				}
			}
		})
		followup(t, a, "sleep 1h")
		synctest.Wait()
		second := followup(t, a, "reply dropped")
		third := followup(t, a, "reply dropped too")
		a.Cancel(agent.CancelCause{Kind: agent.CauseParent}, false)
		require.NoError(t, a.WhenIdle(bg))
		require.Equal(t, []string{second, third}, discarded)
		require.Equal(t, []string{`{"turn":1,"reason":{"kind":"aborted"}}`}, turnEnds(a))
		require.Equal(t, []string{"turn/start", "user/message", "turn/end"}, typesOf(a), "discarded messages never reach the log")
		followup(t, a, "reply later")
		require.NoError(t, a.WhenIdle(bg))
		require.Len(t, turnEnds(a), 2, "the agent keeps serving")
	})
}

func TestPanicInATurnIsAFailedTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := start(t, agent.Scripted(agent.Options{}))
		followup(t, a, "reply before\npanic")
		followup(t, a, "reply after")
		require.NoError(t, a.WhenIdle(bg))
		require.Equal(t, []string{
			`{"turn":1,"reason":{"kind":"error","step":2,"message":"panic: scripted: panic command"}}`,
			`{"turn":2,"reason":{"kind":"completed"}}`,
		}, turnEnds(a))
	})
}

// codedError carries an ErrorCode.
type codedError struct{}

func (codedError) Error() string     { return "rate limited" }
func (codedError) ErrorCode() string { return "RATE_LIMIT" }

func TestStopReasonsBecomeTurnEndReasons(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := start(t, agent.Func(func(ctx context.Context, host agent.Host, msg event.UserMessage) (agent.StopReason, error) {
			switch msg.Content[0].Text {
			case "coded":
				return agent.Error, fmt.Errorf("wrapped: %w", codedError{})
			case "bare error":
				return agent.Error, nil
			case "self abort":
				return agent.Aborted, nil
			}
			return agent.Scripted(agent.Options{}).RunTurn(ctx, host, msg)
		}))
		for _, text := range []string{"fail disk full", "coded", "bare error", "refuse", "max-tokens", "self abort", "frob x\nreply y"} {
			followup(t, a, text)
		}
		require.NoError(t, a.WhenIdle(bg))
		require.Equal(t, []string{
			`{"turn":1,"reason":{"kind":"error","step":1,"message":"disk full"}}`,
			`{"turn":2,"reason":{"kind":"error","step":1,"message":"wrapped: rate limited","code":"RATE_LIMIT"}}`,
			`{"turn":3,"reason":{"kind":"error","step":1,"message":"turn ended with stop reason \"error\""}}`,
			`{"turn":4,"reason":{"kind":"refusal"}}`,
			`{"turn":5,"reason":{"kind":"max-tokens"}}`,
			`{"turn":6,"reason":{"kind":"aborted"}}`,
			`{"turn":7,"reason":{"kind":"error","step":1,"message":"scripted: unknown command \"frob\""}}`,
		}, turnEnds(a))
	})
}

// TestInterruptionBeatsTheAgentsOwnEnd: interruption beats error, and the
// abort signal is checked once more before turn/end:
// a turn cancelled while it ran ends aborted (disposed under disposal)
// whatever the agent then reports: completed, max-tokens, refusal, an
// error or a panic.
func TestInterruptionBeatsTheAgentsOwnEnd(t *testing.T) {
	ends := map[string]func() (agent.StopReason, error){
		"completed":  func() (agent.StopReason, error) { return agent.Completed, nil },
		"max-tokens": func() (agent.StopReason, error) { return agent.MaxTokens, nil },
		"refusal":    func() (agent.StopReason, error) { return agent.Refusal, nil },
		"error":      func() (agent.StopReason, error) { return agent.Error, errors.New("late failure") },
		"bare error": func() (agent.StopReason, error) { return agent.Error, nil },
		"panic":      func() (agent.StopReason, error) { panic("late panic") },
	}
	for name, end := range ends {
		for _, dispose := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s dispose=%v", name, dispose), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					a := start(t, agent.Func(func(ctx context.Context, _ agent.Host, _ event.UserMessage) (agent.StopReason, error) {
						<-ctx.Done()
						return end()
					}))
					followup(t, a, "x")
					synctest.Wait()
					want := `{"turn":1,"reason":{"kind":"aborted"}}`
					if dispose {
						require.NoError(t, a.Dispose(bg))
						want = `{"turn":1,"reason":{"kind":"disposed"}}`
					} else {
						a.Cancel(agent.CancelCause{Kind: agent.CauseUser}, true)
						require.NoError(t, a.WhenIdle(bg))
					}
					require.Equal(t, []string{want}, turnEnds(a))
				})
			})
		}
	}
}

func TestDisposeDuringATurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := start(t, agent.Scripted(agent.Options{}))
		followup(t, a, "sleep 1h")
		followup(t, a, "reply queued")
		synctest.Wait()
		require.NoError(t, a.Dispose(bg))
		require.Equal(t, []string{`{"turn":1,"reason":{"kind":"disposed"}}`}, turnEnds(a))
		select {
		case <-a.Done():
		default:
			t.Fatal("the actor has not stopped")
		}
		_, err := a.Followup(bg, event.UserMessage{Content: event.Text("reply late"), Source: event.Source{Kind: "user"}})
		require.ErrorIs(t, err, fault.InboxClosed)
		require.ErrorContains(t, err, `actors: agent "agent-1" inbox is closed`)
		require.NoError(t, a.Dispose(bg), "idempotent")
	})
}

func TestDisposeIsBoundedByItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		a := start(t, agent.Func(func(context.Context, agent.Host, event.UserMessage) (agent.StopReason, error) {
			<-release // ignores cancellation
			return agent.Completed, nil
		}))
		followup(t, a, "stuck")
		synctest.Wait()
		ctx, cancel := context.WithTimeout(bg, time.Second)
		defer cancel()
		require.ErrorIs(t, a.Dispose(ctx), context.DeadlineExceeded)
		close(release)
		require.NoError(t, a.Dispose(bg), "a later Dispose continues")
		require.Equal(t, []string{`{"turn":1,"reason":{"kind":"disposed"}}`}, turnEnds(a))
	})
}

func TestSayAfterTheTurnFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kept := make(chan agent.Host, 1)
		a := start(t, agent.Func(func(_ context.Context, host agent.Host, _ event.UserMessage) (agent.StopReason, error) {
			kept <- host
			return agent.Completed, nil
		}))
		followup(t, a, "x")
		require.NoError(t, a.WhenIdle(bg))
		host := <-kept
		require.Equal(t, "agent-1", host.SessionID())
		require.Nil(t, host.Subagents())
		require.ErrorIs(t, host.Say(bg, event.Text("late")), errTurnOver)
	})
}

func TestSubagentsCapabilityIsBoundPerAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		a := start(t, agent.Func(func(_ context.Context, host agent.Host, _ event.UserMessage) (agent.StopReason, error) {
			if host.Subagents() == nil {
				return agent.Error, errors.New("no capability")
			}
			return agent.Completed, nil
		}), func(c *Config) {
			c.Subagents = func() agent.Subagents { calls.Add(1); return stubSubagents{} }
		})
		followup(t, a, "x")
		require.NoError(t, a.WhenIdle(bg))
		require.Equal(t, int32(1), calls.Load())
		require.Equal(t, []string{`{"turn":1,"reason":{"kind":"completed"}}`}, turnEnds(a))
	})
}

type stubSubagents struct{}

func (stubSubagents) Spawn(context.Context, string, string) (string, string, error) {
	return "", "", nil
}
func (stubSubagents) Fork(context.Context, string, string) (string, string, error) {
	return "", "", nil
}
func (stubSubagents) Send(context.Context, string, string) (string, error) { return "", nil }
func (stubSubagents) Wait(context.Context, string) (agent.ChildEnd, bool, error) {
	return agent.ChildEnd{}, false, nil
}
func (stubSubagents) Children(context.Context) ([]agent.Child, error) { return nil, nil }

func TestTurnNumbersContinueAfterTheLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seed := []session.Event{
			{Type: "turn/start", Seq: 0, Data: []byte(`{"turn":7}`)},
			{Type: "turn/end", Seq: 1, Data: []byte(`{"turn":7,"reason":{"kind":"completed"}}`)},
		}
		a := startSeeded(t, agent.Scripted(agent.Options{}), seed)
		followup(t, a, "reply again")
		require.NoError(t, a.WhenIdle(bg))
		require.Equal(t, []string{
			`{"turn":7,"reason":{"kind":"completed"}}`,
			`{"turn":8,"reason":{"kind":"completed"}}`,
		}, turnEnds(a))
	})
}

func TestFollowupHonoursADoneContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := start(t, agent.Scripted(agent.Options{}))
		ctx, cancel := context.WithCancel(bg)
		cancel()
		_, err := a.Followup(ctx, event.UserMessage{Content: event.Text("reply x")})
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, inbox.Idle, a.Status())
	})
}

// TestMessagesAreLoggedInShapesTheOriginalReads pins the admission rules
// that keep every logged message readable by the original harness: a
// message needs a source kind, and absent content is logged as [].
func TestMessagesAreLoggedInShapesTheOriginalReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		silent := agent.Func(func(ctx context.Context, host agent.Host, _ event.UserMessage) (agent.StopReason, error) {
			return agent.Completed, host.Say(ctx, nil)
		})
		a := start(t, silent)
		_, err := a.Followup(bg, event.UserMessage{Content: event.Text("no source")})
		require.ErrorIs(t, err, fault.InvalidMessage)
		_, err = a.Followup(bg, event.UserMessage{Source: event.Source{Kind: "user"}})
		require.NoError(t, err)
		require.NoError(t, a.WhenIdle(bg))
		var contents []string
		for _, e := range a.Session().Events() {
			var data struct {
				Content json.RawMessage `json:"content"`
				Message struct {
					Content json.RawMessage `json:"content"`
				} `json:"message"`
			}
			require.NoError(t, json.Unmarshal(e.Data, &data))
			switch e.Type {
			case "user/message":
				contents = append(contents, string(data.Content))
			case "assistant/message":
				contents = append(contents, string(data.Message.Content))
			}
		}
		require.Equal(t, []string{"[]", "[]"}, contents, "the refused message never reached the log")
	})
}

// TestErrorTurnEndShape: an error turn/end is
// {kind:"error", step, message, code?}: step is the step the
// failure happened on (the step after the last one the turn logged, none
// of whose events exist), message the error's text, and code present only
// for an error with an ErrorCode (the original's HarnessError). The first
// case is byte for byte the original's subagent-continuable fixture,
// examples/acp-agent/tests/snapshots/subagent-continuable/session.1.jsonl.
func TestErrorTurnEndShape(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seed := []session.Event{
			{Type: "turn/start", Seq: 0, Data: []byte(`{"turn":2}`)},
			{Type: "turn/end", Seq: 1, Data: []byte(`{"turn":2,"reason":{"kind":"completed"}}`)},
		}
		a := startSeeded(t, agent.Func(func(ctx context.Context, host agent.Host, msg event.UserMessage) (agent.StopReason, error) {
			if msg.Content[0].Text == "coded panic" {
				panic(codedError{})
			}
			return agent.Scripted(agent.Options{}).RunTurn(ctx, host, msg)
		}), seed)
		for _, text := range []string{"fail snapshot disk full", "reply a\nreply b\nfail late", "coded panic"} {
			followup(t, a, text)
		}
		require.NoError(t, a.WhenIdle(bg))
		log := logOf(a)
		require.Equal(t, []string{"turn/start", "user/message", "turn/end"}, typesOf(a)[3:6], "no step events")
		require.Equal(t, `turn/end {"turn":3,"reason":{"kind":"error","step":1,"message":"snapshot disk full"}}`, log[5])
		require.Equal(t, []string{
			`{"turn":2,"reason":{"kind":"completed"}}`,
			`{"turn":3,"reason":{"kind":"error","step":1,"message":"snapshot disk full"}}`,
			`{"turn":4,"reason":{"kind":"error","step":3,"message":"late"}}`,
			`{"turn":5,"reason":{"kind":"error","step":1,"message":"panic: rate limited","code":"RATE_LIMIT"}}`,
		}, turnEnds(a))
	})
}

// TestTurnStartNamesItsMessagesSource: as the original's, a turn/start
// comes before the user/message that opened the turn, and its trigger
// repeats that message's source.
func TestTurnStartNamesItsMessagesSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := start(t, agent.Scripted(agent.Options{}))
		_, err := a.Followup(bg, event.UserMessage{Content: event.Text("reply hi"), Source: event.Source{Kind: "coordinator", SenderSessionID: "p1"}})
		require.NoError(t, err)
		require.NoError(t, a.WhenIdle(bg))
		log := logOf(a)
		require.Equal(t, `turn/start {"turn":1,"trigger":{"kind":"message","source":{"kind":"coordinator","senderSessionId":"p1"}}}`, log[0])
		require.True(t, strings.HasPrefix(log[1], `user/message {"content":[{"type":"text","text":"reply hi"}],"source":{"kind":"coordinator","senderSessionId":"p1"}`), log[1])
	})
}

package manager

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	agentactor "github.com/dsh-actors/dsh-actors/actors/activation"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/actorkit"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

func ev(typ, data string) session.Event { return session.Event{Type: typ, Data: json.RawMessage(data)} }

func start(turn, trigger string) session.Event {
	if trigger == "" {
		return ev("turn/start", `{"turn":`+turn+`}`)
	}
	return ev("turn/start", `{"turn":`+turn+`,"trigger":{"kind":"`+trigger+`"}}`)
}

func end(turn, kind string) session.Event {
	return ev("turn/end", `{"turn":`+turn+`,"reason":{"kind":"`+kind+`"}}`)
}

func say(text string) session.Event {
	return ev("assistant/message", `{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"`+text+`"}]}}`)
}

// captureEpoch's output and stop reason over one epoch's own events.
func TestCaptureEpoch(t *testing.T) {
	empty := ev("assistant/message", `{"turn":1,"step":1,"message":{"role":"assistant","content":[]}}`)
	cases := []struct {
		name   string
		own    []session.Event
		reason agent.StopReason
		output []event.Block
	}{
		{"no events: completed, no output", nil, agent.Completed, nil},
		{"a completed turn", []session.Event{start("1", "message"), say("hi"), end("1", "completed")}, agent.Completed, event.Text("hi")},
		{"a turn/start without a trigger is message-triggered", []session.Event{start("1", ""), end("1", "max-tokens")}, agent.MaxTokens, nil},
		{"disposed maps to aborted", []session.Event{start("1", "message"), end("1", "disposed")}, agent.Aborted, nil},
		{"interrupted maps to aborted", []session.Event{start("1", "message"), end("1", "interrupted")}, agent.Aborted, nil},
		{"error", []session.Event{start("1", "message"), end("1", "error")}, agent.Error, nil},
		{"refusal", []session.Event{start("1", "message"), end("1", "refusal")}, agent.Refusal, nil},
		{"a seed-era error reason", []session.Event{start("1", "message"),
			ev("turn/end", `{"turn":1,"reason":{"kind":"error","step":1,"message":"snapshot disk full"}}`)}, agent.Error, nil},
		{"a seed-era coded error reason", []session.Event{start("1", "message"),
			ev("turn/end", `{"turn":1,"reason":{"kind":"error","step":2,"message":"slow down","code":"RATE_LIMIT"}}`)}, agent.Error, nil},
		{"a seed-era model failure", []session.Event{start("1", "message"),
			ev("turn/end", `{"turn":1,"reason":{"kind":"error","step":1,"failure":{"message":"denied","code":"AUTH"}}}`)}, agent.Error, nil},
		{"the error reason this runtime wrote before", []session.Event{start("1", "message"),
			ev("turn/end", `{"turn":1,"reason":{"kind":"error","error":{"message":"disk full","code":"UNKNOWN"}}}`)}, agent.Error, nil},
		{"an unknown kind is error", []session.Event{start("1", "message"), end("1", "paused")}, agent.Error, nil},
		{"the last message turn wins over a later other trigger",
			[]session.Event{start("1", "message"), end("1", "max-tokens"), start("2", "maintenance"), end("2", "error")}, agent.MaxTokens, nil},
		{"an open turn does not count", []session.Event{start("1", "message"), end("1", "completed"), start("2", "message")}, agent.Completed, nil},
		{"a turn started before the boundary does not count", []session.Event{end("1", "error")}, agent.Completed, nil},
		{"a retry chain ends with its last turn: a retry that completes",
			[]session.Event{start("1", "message"), end("1", "error"), start("2", "retry"), say("ok"), end("2", "completed")}, agent.Completed, event.Text("ok")},
		{"a retry chain whose retries fail too",
			[]session.Event{start("1", "message"), end("1", "error"), start("2", "retry"), end("2", "error"), start("3", "retry"), end("3", "max-tokens")}, agent.MaxTokens, nil},
		{"an open retry turn: the chain's last closed turn",
			[]session.Event{start("1", "message"), end("1", "error"), start("2", "retry")}, agent.Error, nil},
		{"a retry of a turn no message opened does not count",
			[]session.Event{start("1", "message"), end("1", "max-tokens"), start("2", "maintenance"), end("2", "error"), start("3", "retry"), end("3", "completed")}, agent.MaxTokens, nil},
		{"the last assistant message, even empty", []session.Event{start("1", "message"), say("first"), empty, end("1", "completed")}, agent.Completed, []event.Block{}},
		{"an earlier turn's message when the last turn said nothing",
			[]session.Event{start("1", "message"), say("first"), end("1", "completed"), start("2", "message"), end("2", "aborted")}, agent.Aborted, event.Text("first")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			epoch := captureEpoch(c.own)
			require.Equal(t, c.reason, epoch.StopReason)
			require.Equal(t, c.output, epoch.Output)
		})
	}
}

func BenchmarkCaptureEpochOfALongEpoch(b *testing.B) {
	var own []session.Event
	for range 1000 {
		own = append(own, start("1", "message"), say("x"), end("1", "completed"))
	}
	for b.Loop() {
		captureEpoch(own)
	}
}

// BenchmarkCaptureEpoch captures the epoch of a child a drain cancelled
// mid-turn (what every teardown of a drain does once).
func BenchmarkCaptureEpoch(b *testing.B) {
	own := []session.Event{
		ev("user/message", `{"role":"user","id":"m1","content":[{"type":"text","text":"wait"}],"source":{"kind":"user"}}`),
		start("1", "message"),
		ev("turn/end", `{"turn":1,"reason":{"kind":"aborted","cause":{"kind":"parent","reason":"the parent's disposal cancelled the turn"}}}`),
	}
	for b.Loop() {
		captureEpoch(own)
	}
}

// What an Activation records of its turns gives the epoch captureEpoch
// reads from the log, whatever the turns did: at every boundary of a
// session holding turns of every kind, including a retry chain, a panic,
// a turn that said nothing and a turn cancelled mid-way (every event is
// tried as the boundary, inside a turn or a retry chain too).
func TestARecordedEpochIsTheLoggedOne(t *testing.T) {
	bounded := testkit.Context(t)
	release := make(chan struct{})
	retried := false
	impl := agent.Func(func(ctx context.Context, host agent.Host, msg event.UserMessage) (agent.StopReason, error) {
		switch text := msg.Content[0].Text; text {
		case "retry":
			if !retried {
				retried = true
				return agent.Retry, errors.New("try again")
			}
		case "panic":
			panic("boom")
		case "silent":
			return agent.Completed, nil
		case "fail":
			return agent.Error, errors.New("failed")
		case "max-tokens":
			return agent.MaxTokens, host.Say(ctx, event.Text("partial"))
		case "wait":
			select {
			case <-ctx.Done():
				return agent.Aborted, nil
			case <-release:
			}
		}
		return agent.Completed, host.Say(ctx, event.Text("answer"))
	})
	live, err := session.NewSessions(nil).Create(context.Background(), session.Header{ID: "child"}, nil)
	require.NoError(t, err)
	system := actorkit.NewSystem(nil)
	defer system.Shutdown()
	a, err := agentactor.Start(agentactor.Config{Agent: impl, Session: live, Actors: actorkit.Host{System: system}})
	require.NoError(t, err)
	defer func() { require.NoError(t, a.Dispose(bounded)) }()
	require.Equal(t, captureEpoch(nil), recordedEpoch(a, live.Events(), 0), "before any turn")
	for _, text := range []string{"say", "retry", "silent", "panic", "max-tokens", "fail", "silent", "wait"} {
		_, err := a.Followup(bounded, event.UserMessage{Content: event.Text(text), Source: event.Source{Kind: "user"}})
		require.NoError(t, err)
		if text == "wait" {
			a.Cancel(agent.CancelCause{Kind: agent.CauseParent}, false)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		require.NoError(t, a.WhenIdle(ctx), "the turn of %q to end", text)
		cancel()
		events := live.Events()
		for b := range len(events) + 1 {
			require.Equal(t, captureEpoch(events[b:]), recordedEpoch(a, events, b), "after %q, epoch from event %d", text, b)
		}
	}
	require.True(t, retried, "the retry turn ran")
}

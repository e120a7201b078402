package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeHost records what a scripted turn does.
type fakeHost struct {
	said         []string
	subagents    Subagents
	conversation []Entry
}

func (h *fakeHost) SessionID() string { return "self" }

func (h *fakeHost) Say(_ context.Context, content []event.Block) error {
	for _, b := range content {
		h.said = append(h.said, b.Text)
	}
	return nil
}

func (h *fakeHost) Subagents() Subagents { return h.subagents }

func (h *fakeHost) Conversation() ([]Entry, error) { return h.conversation, nil }

func (h *fakeHost) Step(context.Context) (Step, error) { return nil, errors.New("fakeHost: no steps") }

// fakeSubagents records spawns and sends.
type fakeSubagents struct{ calls []string }

func (s *fakeSubagents) Spawn(_ context.Context, label, prompt string) (string, string, error) {
	s.calls = append(s.calls, "spawn "+label+"|"+prompt)
	return "child-1", "m-1", nil
}

func (s *fakeSubagents) Fork(_ context.Context, label, prompt string) (string, string, error) {
	s.calls = append(s.calls, "fork "+label+"|"+prompt)
	return "child-2", "m-3", nil
}

func (s *fakeSubagents) Send(_ context.Context, childID, text string) (string, error) {
	s.calls = append(s.calls, "send "+childID+"|"+text)
	return "m-2", nil
}

func (s *fakeSubagents) Wait(_ context.Context, childID string) (ChildEnd, bool, error) {
	s.calls = append(s.calls, "wait "+childID)
	return ChildEnd{}, false, nil
}

func (s *fakeSubagents) Children(context.Context) ([]Child, error) {
	s.calls = append(s.calls, "children")
	return nil, nil
}

func runText(t *testing.T, host Host, text string) (StopReason, error) {
	t.Helper()
	return Scripted(Options{}).RunTurn(context.Background(), host, event.UserMessage{Content: event.Text(text)})
}

func TestScriptedCommands(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		stop   StopReason
		err    string
		said   []string
		called []string
	}{
		{name: "reply", text: "reply hello world\n\nreply  second ", stop: Completed, said: []string{"hello world", "second"}},
		{name: "plain text echoes", text: "just some words", stop: Completed, said: []string{"just some words"}},
		{name: "fail", text: "reply a\nfail disk full\nreply b", stop: Error, err: "disk full", said: []string{"a"}},
		{name: "refuse", text: "refuse\nreply never", stop: Refusal},
		{name: "max-tokens", text: "max-tokens", stop: MaxTokens},
		{name: "unknown command fails before running", text: "reply a\nfrobnicate x", stop: Error, err: `scripted: unknown command "frobnicate"`},
		{name: "spawn", text: "spawn scout: look around", stop: Completed, said: []string{"spawned scout child-1"}, called: []string{"spawn scout|look around"}},
		{name: "fork", text: "fork twin: carry on", stop: Completed, said: []string{"forked twin child-2"}, called: []string{"fork twin|carry on"}},
		{name: "send", text: "send child-1: again please", stop: Completed, said: []string{"sent m-2 to child-1"}, called: []string{"send child-1|again please"}},
		{name: "send without target", text: "send nothing here", stop: Error, err: "send needs NAME: TEXT"},
		{name: "bad duration", text: "sleep soon", stop: Error, err: "scripted: sleep"},
		{name: "sleep zero", text: "sleep 0s\nreply done", stop: Completed, said: []string{"done"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			subagents := &fakeSubagents{}
			host := &fakeHost{subagents: subagents}
			stop, err := runText(t, host, tc.text)
			require.Equal(t, tc.stop, stop)
			if tc.err == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tc.err)
			}
			require.Equal(t, tc.said, host.said)
			require.Equal(t, tc.called, subagents.calls)
		})
	}
}

// history replies with one "ROLE: TEXT" line per message: newlines as
// spaces, the text cut at 60 characters (not bytes), tool-call blocks
// without text, tool results as tool.
func TestScriptedHistory(t *testing.T) {
	long := strings.Repeat("é", 59) + "xyz"
	call := event.ToolCallBlock{ID: "c1", Name: "list_agents", Arguments: "{}"}.Block()
	host := &fakeHost{conversation: []Entry{
		{Role: event.RoleUser, Content: event.Text("first\nline")},
		{Role: event.RoleAssistant, Content: []event.Block{{Type: "text", Text: "ok "}, call, {Type: "text", Text: "then"}}},
		{Role: event.RoleAssistant, Content: []event.Block{call}},
		{Role: event.RoleTool, Content: event.Text(long), ToolCallID: "c1"},
		{Role: event.RoleUser, Content: event.Text("history")},
	}}
	stop, err := runText(t, host, "history")
	require.NoError(t, err)
	require.Equal(t, Completed, stop)
	require.Equal(t, []string{"user: first line\nassistant: ok then\nassistant: \ntool: " + strings.Repeat("é", 59) + "x\nuser: history"}, host.said)
}

func TestScriptedPanics(t *testing.T) {
	require.Panics(t, func() { _, _ = runText(t, &fakeHost{}, "reply a\npanic") })
}

func TestScriptedWithoutSubagentsFails(t *testing.T) {
	for _, text := range []string{"spawn a: b", "fork a: b", "send a: b"} {
		stop, err := runText(t, &fakeHost{}, text)
		require.Equal(t, Error, stop)
		require.ErrorIs(t, err, errNoSubagents)
	}
}

func TestScriptedSleepHonoursCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		host := &fakeHost{}
		done := make(chan StopReason)
		go func() {
			stop, _ := Scripted(Options{}).RunTurn(ctx, host, event.UserMessage{Content: event.Text("sleep 1h\nreply late")})
			done <- stop
		}()
		time.Sleep(time.Minute)
		synctest.Wait()
		cancel(CancelCause{Kind: CauseUser})
		require.Equal(t, Aborted, <-done)
		require.Empty(t, host.said)
	})
}

func TestScriptedSleepWaitsItsDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		stop, err := runText(t, &fakeHost{}, "sleep 90s")
		require.NoError(t, err)
		require.Equal(t, Completed, stop)
		require.Equal(t, 90*time.Second, time.Since(start))
	})
}

func TestCancelCause(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(CancelCause{Kind: CauseHook, Reason: "budget"})
	var cause CancelCause
	require.ErrorAs(t, context.Cause(ctx), &cause)
	require.Equal(t, CancelCause{Kind: CauseHook, Reason: "budget"}, cause)
	require.Equal(t, "turn cancelled: hook: budget", cause.Error())
	require.False(t, errors.As(errors.New("other"), &cause))
}

func FuzzParseScript(f *testing.F) {
	for _, seed := range []string{"reply a", "sleep 1s\nreply b", "spawn x: y", "hello", "", "fail\n\npanic", "bogus\nreply"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		script, err := parseScript(text)
		if err != nil {
			require.Nil(t, script)
			return
		}
		require.NotEmpty(t, script)
		for _, c := range script {
			require.True(t, commandWords[c.name], c.name)
			require.Equal(t, strings.TrimSpace(c.arg), c.arg)
		}
	})
}

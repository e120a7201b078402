package activation

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"
	"testing/synctest"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// envelopeOf renders an event as "seq type data [sources] [surface]", with
// the random message ids replaced by ID.
func envelopeOf(e session.Event) string {
	line := e.Type + " " + ids.ReplaceAllString(string(e.Data), `"id":"ID"`)
	if e.SourceEventSeqs != nil {
		b, _ := json.Marshal(e.SourceEventSeqs)
		line += " sources=" + string(b)
	}
	if e.SurfaceOp != nil {
		line += " surface=" + string(e.SurfaceOp)
	}
	return line
}

var ids = regexp.MustCompile(`"id":"[0-9a-f-]{36}"`)

func envelopes(events []session.Event) []string {
	var lines []string
	for _, e := range events {
		lines = append(lines, envelopeOf(e))
	}
	return lines
}

// modelTurn is a turn as a model agent logs it: a step calling a tool,
// then a step answering in text.
func modelTurn(ctx context.Context, host agent.Host, _ event.UserMessage) (agent.StopReason, error) {
	call := event.ToolCallBlock{ID: "call_1", Name: "list_agents", Arguments: "{}"}
	s, err := host.Step(ctx)
	if err != nil {
		return agent.Error, err
	}
	m := s.(vocab.Transcript)
	header := vocab.Header{Config: vocab.Config{Provider: "deepseek-official", Model: "deepseek-v4-flash"}}
	if err := m.RequestHeader(ctx, header, vocab.HeaderInitial); err != nil {
		return agent.Error, err
	}
	if err := m.RequestContext(ctx, vocab.RequestContext{Provider: "deepseek-official", Model: "deepseek-v4-flash"}); err != nil {
		return agent.Error, err
	}
	block := call.Block()
	for _, c := range []vocab.Chunk{
		{Type: vocab.ChunkBlockStart, BlockType: event.BlockToolCall},
		{Type: vocab.ChunkToolCallDelta, ID: "call_1", Name: "list_agents", ArgumentsDelta: "{}"},
		{Type: vocab.ChunkBlockEnd, Block: &block},
		{Type: vocab.ChunkUsage, Usage: &vocab.Usage{InputTokens: 10, OutputTokens: 5}},
		{Type: vocab.ChunkFinish, Finish: &vocab.FinishReason{Kind: vocab.FinishToolCalls}},
	} {
		if err := m.Chunk(ctx, c); err != nil {
			return agent.Error, err
		}
	}
	if _, err := m.MessageWithUsage(ctx, []event.Block{block}, &vocab.Usage{InputTokens: 10, OutputTokens: 5}); err != nil {
		return agent.Error, err
	}
	if err := s.ToolCall(ctx, call); err != nil {
		return agent.Error, err
	}
	if _, err := s.ToolResult(ctx, agent.ToolResult{CallID: "call_1", Content: event.Text("no children")}); err != nil {
		return agent.Error, err
	}
	if err := s.End(ctx); err != nil {
		return agent.Error, err
	}
	s, err = host.Step(ctx)
	if err != nil {
		return agent.Error, err
	}
	if err := s.(vocab.Transcript).Chunk(ctx, vocab.Chunk{Type: vocab.ChunkTextDelta, Text: "DONE"}); err != nil {
		return agent.Error, err
	}
	if _, err := s.Message(ctx, event.Text("DONE")); err != nil {
		return agent.Error, err
	}
	return agent.Completed, s.End(ctx)
}

// TestAModelTurnLogsTheOriginalsShapes: steps numbered from 1, chunks
// cited by the message, the tool result citing its call, and the whole
// log passing the session query's surface rules.
func TestAModelTurnLogsTheOriginalsShapes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sessions := session.NewSessions(nil)
		live, err := sessions.Create(bg, session.Header{ID: "agent-1"}, nil)
		require.NoError(t, err)
		a := startOn(t, live, agent.Func(modelTurn), nil)
		followup(t, a, "list them")
		require.NoError(t, a.WhenIdle(bg))
		lines := envelopes(a.Session().Events())
		require.Equal(t, []string{
			`turn/start {"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}`,
			`user/message {"content":[{"type":"text","text":"list them"}],"source":{"kind":"user"},"role":"user","id":"ID"} surface="append"`,
			`step/start {"turn":1,"step":1}`,
			`request/header {"header":{"config":{"provider":"deepseek-official","model":"deepseek-v4-flash"}},"reason":"initial"}`,
			`request/context {"provider":"deepseek-official","model":"deepseek-v4-flash"}`,
			`assistant/chunk {"turn":1,"step":1,"chunk":{"type":"block-start","index":0,"blockType":"tool-call"}}`,
			`assistant/chunk {"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":0,"id":"call_1","name":"list_agents","argumentsDelta":"{}"}}`,
			`assistant/chunk {"turn":1,"step":1,"chunk":{"type":"block-end","index":0,"block":{"type":"tool-call","id":"call_1","name":"list_agents","arguments":"{}"}}}`,
			`assistant/chunk {"turn":1,"step":1,"chunk":{"type":"usage","usage":{"inputTokens":10,"outputTokens":5}}}`,
			`assistant/chunk {"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"tool-calls"}}}`,
			`assistant/message {"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"tool-call","id":"call_1","name":"list_agents","arguments":"{}"}],"source":{"kind":"model","provider":"test","model":"m1"},"id":"ID"},"usage":{"inputTokens":10,"outputTokens":5}} sources=[5,6,7,8,9] surface="append"`,
			`tool/call {"turn":1,"step":1,"callId":"call_1","name":"list_agents","arguments":"{}"}`,
			`tool/result {"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"call_1"},"content":[{"type":"tool-result","toolCallId":"call_1","content":[{"type":"text","text":"no children"}],"isError":false}],"role":"user","id":"ID"}} sources=[11] surface="append"`,
			`step/end {"turn":1,"step":1}`,
			`step/start {"turn":1,"step":2}`,
			`assistant/chunk {"turn":1,"step":2,"chunk":{"type":"text-delta","index":0,"text":"DONE"}}`,
			`assistant/message {"turn":1,"step":2,"message":{"role":"assistant","content":[{"type":"text","text":"DONE"}],"source":{"kind":"model","provider":"test","model":"m1"},"id":"ID"}} sources=[15] surface="append"`,
			`step/end {"turn":1,"step":2}`,
			`turn/end {"turn":1,"reason":{"kind":"completed"}}`,
		}, lines)
		records, err := query.New(sessions).ListEvents(bg, "agent-1")
		require.NoError(t, err, "the surface rules hold")
		require.Len(t, records, len(lines))

		conv, err := a.Conversation()
		require.NoError(t, err)
		require.Equal(t, []string{"user list them", "assistant tool-call call_1", "tool no children", "assistant DONE"}, summaries(conv))
		require.Equal(t, "call_1", conv[2].ToolCallID)
	})
}

// summaries renders entries as "ROLE TEXT" (a tool call as its id).
func summaries(entries []agent.Entry) []string {
	var out []string
	for _, e := range entries {
		text := event.TextOf(e.Content)
		for _, b := range e.Content {
			if call, ok := b.ToolCall(); ok {
				text += "tool-call " + call.ID
			}
		}
		out = append(out, e.Role+" "+text)
	}
	return out
}

// TestAFailedModelStepEndsTheTurnWithItsFailure: chunks stay, the open
// step is closed by the runtime, and turn/end names the step and the
// failure {message, code}; a result for a call never logged is refused.
func TestAFailedModelStepEndsTheTurnWithItsFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := start(t, agent.Func(func(ctx context.Context, host agent.Host, _ event.UserMessage) (agent.StopReason, error) {
			require.NoError(t, host.Say(ctx, event.Text("first")))
			s, err := host.Step(ctx)
			require.NoError(t, err)
			require.Equal(t, 2, s.Number())
			_, err = host.Step(ctx)
			require.ErrorContains(t, err, "step 2 is still open")
			require.ErrorContains(t, host.Say(ctx, event.Text("x")), "step 2 is still open")
			_, err = s.ToolResult(ctx, agent.ToolResult{CallID: "nope"})
			require.ErrorContains(t, err, `no tool/call logged for call "nope"`)
			require.NoError(t, s.(vocab.Transcript).Chunk(ctx, vocab.Chunk{Type: vocab.ChunkFinish, Finish: &vocab.FinishReason{Kind: vocab.FinishError,
				Failure: &vocab.Failure{Message: "model returned a completed response with no content", Code: "EMPTY_RESPONSE"}}}))
			return agent.Error, vocab.Failure{Message: "model returned a completed response with no content", Code: "EMPTY_RESPONSE"}
		}))
		followup(t, a, "go")
		require.NoError(t, a.WhenIdle(bg))
		lines := envelopes(a.Session().Events())
		require.Equal(t, []string{
			`step/start {"turn":1,"step":2}`,
			`assistant/chunk {"turn":1,"step":2,"chunk":{"type":"finish","reason":{"kind":"error","failure":{"message":"model returned a completed response with no content","code":"EMPTY_RESPONSE"}}}}`,
			`step/end {"turn":1,"step":2}`,
			`turn/end {"turn":1,"reason":{"kind":"error","step":2,"failure":{"message":"model returned a completed response with no content","code":"EMPTY_RESPONSE"}}}`,
		}, lines[5:])
	})
}

// TestTheConversationIsTheSurface: the agent reads, during its turn, the
// messages of the folded surface (a replaced range shows its
// replacement), including the message that opened the turn, and nothing
// else of the log.
func TestTheConversationIsTheSurface(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		msg := func(seq int64, id, text string) session.Event {
			data, _ := vocab.Encode(event.UserMessage{Content: event.Text(text), Source: event.Source{Kind: "user"}, Role: "user", ID: id})
			return session.Event{Type: vocab.TypeUserMessage, Seq: seq, Data: data, SurfaceOp: json.RawMessage(`"append"`)}
		}
		summary := msg(5, "s", "summary of a and b")
		summary.SurfaceOp = json.RawMessage(`{"op":"replace","start":1,"end":3}`)
		summary.SourceEventSeqs = []int64{1, 3}
		seed := []session.Event{
			{Type: vocab.TypeTurnStart, Seq: 0, Data: []byte(`{"turn":1}`)},
			msg(1, "a", "first"),
			{Type: vocab.TypeStepStart, Seq: 2, Data: []byte(`{"turn":1,"step":1}`)},
			msg(3, "b", "second"),
			{Type: vocab.TypeTurnEnd, Seq: 4, Data: []byte(`{"turn":1,"reason":{"kind":"completed"}}`)},
			summary,
		}
		var seen []agent.Entry
		a := startSeeded(t, agent.Func(func(ctx context.Context, host agent.Host, _ event.UserMessage) (agent.StopReason, error) {
			var err error
			seen, err = host.Conversation()
			return agent.Completed, err
		}), seed)
		followup(t, a, "third")
		require.NoError(t, a.WhenIdle(bg))
		require.Equal(t, []string{"user summary of a and b", "user third"}, summaries(seen))
		require.Equal(t, int64(5), seen[0].Seq)
		require.Equal(t, event.Source{Kind: "user"}, seen[1].Source)
	})
}

// TestACrashBetweenToolCallAndResultRepairsToTheOriginalsCloser: a log cut
// after a model turn's tool/call (the process died while the tool ran)
// loads with the original's closers: a tool/result whose outcome is
// unknown citing that tool/call, step/end, turn/end interrupted.
func TestACrashBetweenToolCallAndResultRepairsToTheOriginalsCloser(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		called, release := make(chan struct{}), make(chan struct{})
		a := start(t, agent.Func(func(ctx context.Context, host agent.Host, _ event.UserMessage) (agent.StopReason, error) {
			call := event.ToolCallBlock{ID: "call_1", Name: "write", Arguments: `{"path":"x"}`}
			s, err := host.Step(ctx)
			require.NoError(t, err)
			_, err = s.Message(ctx, []event.Block{call.Block()})
			require.NoError(t, err)
			require.NoError(t, s.ToolCall(ctx, call))
			close(called)
			<-release
			return agent.Aborted, nil
		}))
		followup(t, a, "write it")
		<-called
		crashed := a.Session().Events() // what was durable when the process died
		close(release)

		store, err := session.OpenJSONL(t.TempDir())
		require.NoError(t, err)
		defer func() { require.NoError(t, store.Close()) }()
		require.NoError(t, store.Create(bg, session.Header{ID: "crashed"}, crashed))
		log, err := store.Load(bg, "crashed")
		require.NoError(t, err)
		require.Equal(t, vocab.TypeToolCall, crashed[4].Type)
		closers := log.Events[len(crashed):]
		require.Len(t, closers, 3)
		require.Equal(t, `tool/result {"turn":1,"step":1,"message":{"id":"interrupted-tool-result-call_1-5",`+
			`"role":"user","source":{"kind":"tool","callId":"call_1"},"content":[{"type":"tool-result","toolCallId":"call_1",`+
			`"isError":true,"content":[{"type":"text","text":"The tool call was interrupted after it was recorded, but no result was durably recorded. `+
			`Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the operation is read-only or idempotent; `+
			`if it may have side effects, first verify external state or ask the user. Do not retry blindly."}]}]},`+
			`"error":{"name":"ToolOutcomeUnknownError","code":"TOOL_OUTCOME_UNKNOWN"}} sources=[4] surface="append"`,
			envelopeOf(closers[0]))
		require.Equal(t, crashed[4].Time, closers[0].Time, "a closer has the last event's time")
		require.Equal(t, []string{`step/end {"turn":1,"step":1}`, `turn/end {"turn":1,"reason":{"kind":"interrupted"}}`},
			envelopes(closers[1:]))
	})
}

// The conversation an agent reads is the one a fresh fold of its log
// gives, whether a message it logged was cached as it was logged (plain
// text) or is decoded from the log (bytes the log rewrites, other blocks).
func TestTheConversationReadsAsAFreshFoldOfTheLog(t *testing.T) {
	contents := [][]event.Block{
		event.Text("DONE"),
		event.Text("a\n\"b\" \u2028 é"),
		event.Text("bad \xff byte"),
		{},
		{{Type: "text", Text: "one"}, {Type: "text", Text: "two"}},
		{event.ToolCallBlock{ID: "c", Name: "n", Arguments: "{}"}.Block()},
	}
	say := func(ctx context.Context, host agent.Host, _ event.UserMessage) (agent.StopReason, error) {
		for i, content := range contents {
			if i%2 == 0 {
				if err := host.Say(ctx, content); err != nil {
					return agent.Error, err
				}
				continue
			}
			s, err := host.Step(ctx)
			if err != nil {
				return agent.Error, err
			}
			if _, err := s.Message(ctx, content); err != nil {
				return agent.Error, err
			}
			if err := s.End(ctx); err != nil {
				return agent.Error, err
			}
		}
		return agent.Completed, nil
	}
	synctest.Test(t, func(t *testing.T) {
		sessions := session.NewSessions(nil)
		live, err := sessions.Create(bg, session.Header{ID: "agent-1"}, nil)
		require.NoError(t, err)
		a := startOn(t, live, agent.Func(say), nil)
		for turn, text := range []string{"one", "two"} {
			followup(t, a, text)
			require.NoError(t, a.WhenIdle(bg))
			if turn == 0 {
				c := a.conversed()
				c.mu.Lock()
				cached := len(c.entries)
				c.mu.Unlock()
				require.Equal(t, 4, cached, "the four messages of valid text blocks are cached as logged")
			}
			got, err := a.Conversation()
			require.NoError(t, err)
			fresh, err := (&conversation{}).read(a.Session().Events())
			require.NoError(t, err)
			require.Equal(t, fresh, got)
		}
	})
}

package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/llm"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// read collects a stream's chunks as JSON lines and its error.
func read(t *testing.T, body string) ([]string, error) {
	t.Helper()
	var lines []string
	for c, err := range llm.ReadStream(strings.NewReader(body)) {
		if err != nil {
			return lines, err
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b) // as the log writer: no HTML escaping
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(c))
		lines = append(lines, strings.TrimSuffix(b.String(), "\n"))
	}
	return lines, nil
}

func codeOf(err error) string {
	if e, ok := llm.FailureOf(err); ok {
		return e.Code
	}
	return ""
}

func TestReadStreamTranslatesAsTheOriginal(t *testing.T) {
	tests := []struct {
		name string
		body []byte
		want []string
	}{{
		name: "text in deltas, usage, stop",
		body: streamBody(llmtest.Say("Hel", "lo")),
		want: []string{
			`{"type":"block-start","index":0,"blockType":"text"}`,
			`{"type":"text-delta","index":0,"text":"Hel"}`,
			`{"type":"text-delta","index":0,"text":"lo"}`,
			`{"type":"block-end","index":0,"block":{"type":"text","text":"Hello"}}`,
			`{"type":"usage","usage":{"inputTokens":10,"outputTokens":2}}`,
			`{"type":"finish","reason":{"kind":"stop"}}`,
		},
	}, {
		name: "reasoning opens before text; tool-call arguments split across deltas",
		body: streamBody(llmtest.Response{
			Reasoning: []string{"think"},
			Text:      []string{"ok"},
			Calls: []llmtest.Call{
				{ID: "call_a", Name: "subagent", Args: []string{`{"description":`, ` "x"}`}},
				{ID: "call_b", Name: "list_agents", Args: []string{`{}`}},
			},
			Usage: &llmtest.Usage{Prompt: 30, Completion: 7, CacheHit: 20, Reasoning: 3},
		}),
		want: []string{
			`{"type":"block-start","index":0,"blockType":"reasoning"}`,
			`{"type":"reasoning-delta","index":0,"text":"think"}`,
			`{"type":"block-start","index":1,"blockType":"text"}`,
			`{"type":"text-delta","index":1,"text":"ok"}`,
			`{"type":"block-start","index":2,"blockType":"tool-call"}`,
			`{"type":"tool-call-delta","index":2,"id":"call_a","name":"subagent","argumentsDelta":"{\"description\":"}`,
			`{"type":"tool-call-delta","index":2,"id":"call_a","name":"subagent","argumentsDelta":" \"x\"}"}`,
			`{"type":"block-start","index":3,"blockType":"tool-call"}`,
			`{"type":"tool-call-delta","index":3,"id":"call_b","name":"list_agents","argumentsDelta":"{}"}`,
			`{"type":"block-end","index":0,"block":{"type":"reasoning","text":"think"}}`,
			`{"type":"block-end","index":1,"block":{"type":"text","text":"ok"}}`,
			`{"type":"block-end","index":2,"block":{"type":"tool-call","id":"call_a","name":"subagent","arguments":"{\"description\": \"x\"}"}}`,
			`{"type":"block-end","index":3,"block":{"type":"tool-call","id":"call_b","name":"list_agents","arguments":"{}"}}`,
			`{"type":"usage","usage":{"inputTokens":10,"outputTokens":7,"cacheReadTokens":20,"reasoningTokens":3}}`,
			`{"type":"finish","reason":{"kind":"tool-calls"}}`,
		},
	}, {
		name: "a tool call without id streams id \"\" and no name until known",
		body: sse(
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{"}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"list_agents","arguments":"}"}}]},"finish_reason":"tool_calls"}]}`,
			"[DONE]"),
		want: []string{
			`{"type":"block-start","index":0,"blockType":"tool-call"}`,
			`{"type":"tool-call-delta","index":0,"id":"","argumentsDelta":"{"}`,
			`{"type":"tool-call-delta","index":0,"id":"","name":"list_agents","argumentsDelta":"}"}`,
			`{"type":"block-end","index":0,"block":{"type":"tool-call","id":"","name":"list_agents","arguments":"{}"}}`,
			`{"type":"finish","reason":{"kind":"tool-calls"}}`,
		},
	}, {
		name: "an empty first reasoning delta opens nothing; length is max-tokens; cached_tokens wins",
		body: sse(
			`{"choices":[{"delta":{"reasoning_content":"","content":null}}]}`,
			`{"choices":[{"delta":{"content":"cut"},"finish_reason":"length"}],"usage":{"prompt_tokens":9,"completion_tokens":1,"prompt_cache_hit_tokens":1,"prompt_tokens_details":{"cached_tokens":4}}}`,
			"[DONE]"),
		want: []string{
			`{"type":"block-start","index":0,"blockType":"text"}`,
			`{"type":"text-delta","index":0,"text":"cut"}`,
			`{"type":"block-end","index":0,"block":{"type":"text","text":"cut"}}`,
			`{"type":"usage","usage":{"inputTokens":5,"outputTokens":1,"cacheReadTokens":4}}`,
			`{"type":"finish","reason":{"kind":"max-tokens"}}`,
		},
	}, {
		name: "an unknown finish reason is an error finish with its upper-cased code",
		body: streamBody(llmtest.Response{Text: []string{"x"}, Finish: "content_filter"}),
		want: []string{
			`{"type":"block-start","index":0,"blockType":"text"}`,
			`{"type":"text-delta","index":0,"text":"x"}`,
			`{"type":"block-end","index":0,"block":{"type":"text","text":"x"}}`,
			`{"type":"finish","reason":{"kind":"error","failure":{"message":"model stopped: content_filter","code":"CONTENT_FILTER"}}}`,
		},
	}, {
		name: "a completed response without content is EMPTY_RESPONSE",
		body: streamBody(llmtest.Response{Usage: &llmtest.Usage{}}),
		want: []string{
			`{"type":"usage","usage":{"inputTokens":0,"outputTokens":0}}`,
			`{"type":"finish","reason":{"kind":"error","failure":{"message":"model returned a completed response with no content","code":"EMPTY_RESPONSE"}}}`,
		},
	}, {
		name: "CRLF and CR line ends, a BOM, comments, other fields and multi-line data",
		body: []byte("\uFEFF: keep-alive\r\nevent: message\r\nid: 1\r\ndata: {\"choices\":[{\"delta\":\r\ndata: {\"content\":\"<&>\\u2028\"}}]}\r\n\r\ndata:[DONE]\r\r"),
		want: []string{
			`{"type":"block-start","index":0,"blockType":"text"}`,
			`{"type":"text-delta","index":0,"text":"<&>` + "\u2028" + `"}`,
			`{"type":"block-end","index":0,"block":{"type":"text","text":"<&>` + "\u2028" + `"}}`,
			`{"type":"finish","reason":{"kind":"stop"}}`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := read(t, string(tt.body))
			require.NoError(t, err)
			for i := range got { // json.Marshal escapes U+2028; the log writer does not
				got[i] = strings.ReplaceAll(got[i], `\u2028`, "\u2028")
			}
			require.Equal(t, tt.want, got)
		})
	}
}

func TestReadStreamFailures(t *testing.T) {
	tests := []struct {
		name, body, code, message string
		chunks                    int
	}{
		{"EOF before [DONE]", string(sse(`{"choices":[{"delta":{"content":"a"}}]}`)), "STREAM_CLOSED", "SSE stream ended without [DONE]", 2},
		{"an unterminated [DONE] is truncation", "data: [DONE]", "STREAM_CLOSED", "SSE stream ended without [DONE]", 0},
		{"an empty body", "", "STREAM_CLOSED", "SSE stream ended without [DONE]", 0},
		{"bad JSON", string(sse(`{"choices":[` + strings.Repeat("x", 200))), "MALFORMED_RESPONSE",
			`malformed SSE payload: {"choices":[` + strings.Repeat("x", 108), 0},
		{"an empty data line", "data:\n\n", "MALFORMED_RESPONSE", "malformed SSE payload: ", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := read(t, tt.body)
			require.Len(t, got, tt.chunks)
			require.Equal(t, tt.code, codeOf(err))
			e, _ := llm.FailureOf(err)
			require.Equal(t, tt.message, e.Message)
		})
	}
}

func TestReadStreamPassesAReadErrorOn(t *testing.T) {
	broken := errors.New("connection reset")
	body := io.MultiReader(strings.NewReader("data: {}\n\n"), failingReader{broken})
	var err error
	for _, e := range llm.ReadStream(body) {
		err = e
	}
	require.ErrorIs(t, err, broken)
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func TestAssemblerBuildsTheMessageContent(t *testing.T) {
	var a llm.Assembler
	response := llmtest.Response{Text: []string{"a", "b"}, Calls: []llmtest.Call{
		{Name: "list_agents", Args: []string{"{", "}"}},
	}, Usage: &llmtest.Usage{Prompt: 3, Completion: 4}}
	for _, c := range llmtest.Chunks(response) {
		a.Push(c)
	}
	require.Equal(t, []event.Block{event.Text("ab")[0], event.ToolCallBlock{ID: "call-1", Name: "list_agents", Arguments: "{}"}.Block()}, a.Blocks())
	require.Equal(t, &vocab.Usage{InputTokens: 3, OutputTokens: 4}, a.Usage())
	require.Equal(t, vocab.FinishReason{Kind: vocab.FinishToolCalls}, a.Finish())

	var open llm.Assembler // no block-end, no finish: assembled from deltas, finish stop
	open.Push(vocab.Chunk{Type: vocab.ChunkTextDelta, Index: 4, Text: "x"})
	final := event.Text("final")[0]
	open.Push(vocab.Chunk{Type: vocab.ChunkToolCallDelta, Index: 5, ID: "c", Name: "n", ArgumentsDelta: "{"})
	open.Push(vocab.Chunk{Type: vocab.ChunkBlockEnd, Index: 4, Block: &final})
	open.Push(vocab.Chunk{Type: vocab.ChunkTextDelta, Index: 4, Text: "ignored"})
	require.Equal(t, []event.Block{event.Text("final")[0], event.ToolCallBlock{ID: "c", Name: "n", Arguments: "{"}.Block()}, open.Blocks())
	require.Equal(t, vocab.FinishReason{Kind: vocab.FinishStop}, open.Finish())
	require.Nil(t, open.Usage())
}

// sentBody is the chat-completions body a client without defaults sends
// for req, or the error the call fails with before anything is sent.
func sentBody(t *testing.T, req llm.Request) ([]byte, error) {
	t.Helper()
	srv := llmtest.NewServer(llmtest.Stream(llmtest.Say("x")))
	defer srv.Close()
	if _, err := collect(context.Background(), llmtest.DeepSeekOn(srv, 0), req); err != nil {
		require.Empty(t, srv.Received(), "a call that fails before sending sends nothing")
		return nil, err
	}
	got := srv.Received()
	require.Len(t, got, 1)
	return got[0].Body, nil
}

func TestClientWritesTheOriginalBody(t *testing.T) {
	temp := 0.5
	body, err := sentBody(t, llm.Request{
		Model:  "deepseek-v4-flash",
		System: "be brief",
		Messages: []llm.Message{
			{Role: "user", Content: []event.Block{event.Text("a<b")[0]}},
			{Role: "assistant", Content: []event.Block{{Type: event.BlockReasoning, Text: "plan"}, event.ToolCallBlock{ID: "c1", Name: "list_agents", Arguments: "{}"}.Block()}},
			{Role: event.RoleTool, ToolCallID: "c1", Content: event.Text("(none)")},
			{Role: event.RoleTool, ToolCallID: "c2"},
			{Role: "assistant", Content: []event.Block{{Type: event.BlockReasoning, Text: "dropped"}, event.Text("done")[0]}},
		},
		Tools:           []vocab.ToolSpec{{Name: "list_agents", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}},
		MaxTokens:       100,
		ReasoningEffort: llm.EffortHigh,
		Temperature:     &temp,
		Stop:            []string{"END"},
	})
	require.NoError(t, err)
	require.Equal(t, `{"model":"deepseek-v4-flash","messages":[`+
		`{"role":"system","content":"be brief"},`+
		`{"role":"user","content":"a<b"},`+
		`{"role":"assistant","content":"","reasoning_content":"plan","tool_calls":[{"id":"c1","type":"function","function":{"name":"list_agents","arguments":"{}"}}]},`+
		`{"role":"tool","tool_call_id":"c1","content":"(none)"},`+
		`{"role":"tool","tool_call_id":"c2","content":"(no output)"},`+
		`{"role":"assistant","content":"done"}],`+
		`"stream":true,"stream_options":{"include_usage":true},"thinking":{"type":"enabled"},"reasoning_effort":"high",`+
		`"tools":[{"type":"function","function":{"name":"list_agents","description":"d","parameters":{"type":"object","properties":{}}}}],`+
		`"temperature":0.5,"max_tokens":100,"stop":["END"]}`, string(body))

	off, err := sentBody(t, llm.Request{Model: "m", ReasoningEffort: llm.EffortOff})
	require.NoError(t, err)
	require.Equal(t, `{"model":"m","messages":[],"stream":true,"stream_options":{"include_usage":true},"thinking":{"type":"disabled"}}`, string(off))

	_, err = sentBody(t, llm.Request{Model: "m", ReasoningEffort: "low"})
	require.Equal(t, "UNSUPPORTED_REASONING_EFFORT", codeOf(err))
}

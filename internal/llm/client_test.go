package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/llm"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// collect runs one call and returns its chunks and error.
func collect(ctx context.Context, c llm.Client, req llm.Request) ([]vocab.Chunk, error) {
	var chunks []vocab.Chunk
	for chunk, err := range c.Stream(ctx, req) {
		if err != nil {
			return chunks, err
		}
		chunks = append(chunks, chunk)
	}
	return chunks, nil
}

var hello = llm.Request{Model: "deepseek-v4-flash", SessionID: "s-1",
	Messages: []llm.Message{{Role: "user", Content: []event.Block{event.Text("hi")[0]}}}}

func TestClientStreamsAndSendsTheOriginalRequest(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Stream(llmtest.Say("Hi", " there")))
	defer srv.Close()
	c, err := llm.NewDeepSeek(llm.Config{BaseURL: srv.URL + "/v1/", APIKey: "k", Defaults: llm.DefaultDeepSeek})
	require.NoError(t, err)

	chunks, err := collect(context.Background(), c, hello)
	require.NoError(t, err)
	var a llm.Assembler
	for _, chunk := range chunks {
		a.Push(chunk)
	}
	require.Equal(t, []event.Block{event.Text("Hi there")[0]}, a.Blocks())

	got := srv.Received()
	require.Len(t, got, 1)
	require.Equal(t, "/v1/chat/completions", got[0].Path)
	require.Equal(t, "Bearer k", got[0].Header.Get("Authorization"))
	require.Equal(t, "application/json", got[0].Header.Get("Content-Type"))
	require.Equal(t, "text/event-stream", got[0].Header.Get("Accept"))
	require.Equal(t, "s-1", got[0].Header.Get("X-Deepseek-Harness-Session-Id"))
	require.Equal(t, `{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"hi"}],"stream":true,`+
		`"stream_options":{"include_usage":true},"thinking":{"type":"enabled"},"reasoning_effort":"high","max_tokens":256000}`,
		string(got[0].Body))
}

func TestClientFailures(t *testing.T) {
	long := llmtest.Say("a", "b", "c")
	tests := []struct {
		name     string
		behavior llmtest.Behavior
		idle     time.Duration
		want     vocab.Failure
		chunks   int
	}{
		{"401", llmtest.Status(401, `{"error":{"message":"Authentication Fails (no such user)","type":"authentication_error"}}`),
			0, vocab.Failure{Message: "Authentication Fails (no such user)", Code: "AUTH", Status: 401}, 0},
		{"429 with Retry-After and a request id", llmtest.RateLimited(3), 0,
			vocab.Failure{Message: "Rate limit reached", Code: "RATE_LIMIT", Status: 429, ProviderRetryAfterMs: 3000, RequestID: "req-429"}, 0},
		{"429 out of quota", llmtest.Status(429, `{"error":{"message":"Insufficient Balance"}}`), 0,
			vocab.Failure{Message: "Insufficient Balance", Code: "QUOTA", Status: 429}, 0},
		{"400 context overflow", llmtest.Status(400, `{"error":{"message":"This model's maximum context length is 131072 tokens","code":"invalid_request_error"}}`), 0,
			vocab.Failure{Message: "This model's maximum context length is 131072 tokens", Code: "CONTEXT_WINDOW_EXCEEDED", Status: 400}, 0},
		{"400 otherwise", llmtest.Status(400, `not json`), 0,
			vocab.Failure{Message: "DeepSeek API error (HTTP 400)", Code: "INVALID_REQUEST", Status: 400}, 0},
		{"503", llmtest.Status(503, `{}`), 0, vocab.Failure{Message: "DeepSeek API error (HTTP 503)", Code: "SERVER", Status: 503}, 0},
		{"418", llmtest.Status(418, `{}`), 0, vocab.Failure{Message: "DeepSeek API error (HTTP 418)", Code: "HTTP_418", Status: 418}, 0},
		{"end of stream before [DONE]", truncate(long, 3), 0,
			vocab.Failure{Message: "SSE stream ended without [DONE]", Code: "STREAM_CLOSED"}, 3},
		{"disconnect mid-stream", disconnect(long, 3), 0,
			vocab.Failure{Message: "DeepSeek API stream from <base> failed", Code: "TRANSPORT"}, 3},
		{"stall", stall(long, 2), 20 * time.Millisecond,
			vocab.Failure{Message: "DeepSeek stream idle timeout after 20ms", Code: "TIMEOUT"}, 2},
		{"malformed JSON", malformed(`{"choices":[`), 0,
			vocab.Failure{Message: `malformed SSE payload: {"choices":[`, Code: "MALFORMED_RESPONSE"}, 0},
		{"204", llmtest.Status(204, ``), 0, vocab.Failure{Message: "DeepSeek API returned no response body", Code: "EMPTY_RESPONSE"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(tt.behavior)
			defer srv.Close()
			chunks, err := collect(context.Background(), llmtest.DeepSeekOn(srv, tt.idle), hello)
			if tt.idle > 0 { // a loaded machine may time out before the first events arrive
				require.LessOrEqual(t, len(chunks), tt.chunks)
			} else {
				require.Len(t, chunks, tt.chunks)
			}
			e, ok := llm.FailureOf(err)
			require.True(t, ok, "%v", err)
			if tt.want.Code == "TRANSPORT" {
				tt.want.Message = "DeepSeek API stream from " + srv.URL + " failed"
			}
			require.Equal(t, tt.want, e.Failure)
		})
	}
}

func TestClientRetriesNothingItself(t *testing.T) {
	srv := llmtest.NewServer(llmtest.RateLimited(1), llmtest.Stream(llmtest.Say("ok")))
	defer srv.Close()
	c := llmtest.DeepSeekOn(srv, 0)
	_, err := collect(context.Background(), c, hello)
	require.Equal(t, "RATE_LIMIT", codeOf(err))
	require.Len(t, srv.Received(), 1)
	chunks, err := collect(context.Background(), c, hello)
	require.NoError(t, err)
	require.Equal(t, vocab.ChunkFinish, chunks[len(chunks)-1].Type)
	require.Len(t, srv.Received(), 2)
}

func TestClientTransportAndCallerFailures(t *testing.T) {
	srv := llmtest.NewServer()
	url := srv.URL
	srv.Close()
	c, err := llm.NewDeepSeek(llm.Config{BaseURL: url, APIKey: "k"})
	require.NoError(t, err)
	_, err = collect(context.Background(), c, hello)
	e, _ := llm.FailureOf(err)
	require.Equal(t, "TRANSPORT", e.Code)
	require.Equal(t, "DeepSeek API request to "+url+" failed", e.Message)
	require.Contains(t, e.Error(), "DeepSeek API request to "+url+" failed: Post ")

	stall := llmtest.NewServer(stall(llmtest.Say("x"), 2))
	defer stall.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var chunks int
	for _, err = range llmtest.DeepSeekOn(stall, 0).Stream(ctx, hello) {
		if err == nil {
			chunks++
			cancel()
		}
	}
	require.Equal(t, 2, chunks, "the chunks of the event that arrived, then the cancellation")
	require.Equal(t, "ABORTED", codeOf(err))
}

func TestNewDeepSeekNeedsAKey(t *testing.T) {
	_, err := llm.NewDeepSeek(llm.Config{})
	require.Equal(t, "MISSING_CREDENTIAL", codeOf(err))
	require.Contains(t, err.Error(), "DEEPSEEK_API_KEY")
}

func TestScriptedClientRecordsRequests(t *testing.T) {
	c := llmtest.NewClient(llmtest.Reply(llmtest.Say("one")), llmtest.Fail(&llm.Error{Failure: vocab.Failure{Message: "boom", Code: "SERVER"}}))
	chunks, err := collect(context.Background(), c, hello)
	require.NoError(t, err)
	require.Len(t, chunks, 5)
	_, err = collect(context.Background(), c, hello)
	require.Equal(t, "SERVER", codeOf(err))
	_, err = collect(context.Background(), c, hello)
	require.ErrorIs(t, err, llmtest.ErrExhausted)
	require.Len(t, c.Requests(), 3)
	require.Zero(t, c.Remaining())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.Push(llmtest.Hang())
	var got []vocab.Chunk
	for chunk, err := range c.Stream(ctx, hello) {
		if err != nil {
			require.Equal(t, "ABORTED", codeOf(err))
			break
		}
		got = append(got, chunk)
		if len(got) == 2 {
			cancel()
		}
	}
	require.Len(t, got, 2)
}

func TestChunkJSONMatchesTheOriginalFixture(t *testing.T) {
	// Lines 8-11 of the original's subagent-list-agents parent log.
	args := `{"description": "Reply with CHILD_OK", "prompt": "Reply with exactly the word CHILD_OK and nothing else.", "run_in_background": true}`
	call := event.ToolCallBlock{ID: "call_bg_start", Name: "subagent", Arguments: args}.Block()
	chunks := []vocab.Chunk{
		{Type: vocab.ChunkBlockStart, BlockType: event.BlockToolCall},
		{Type: vocab.ChunkToolCallDelta, ID: "call_bg_start", Name: "subagent", ArgumentsDelta: args},
		{Type: vocab.ChunkBlockEnd, Block: &call},
		{Type: vocab.ChunkUsage, Usage: &vocab.Usage{InputTokens: 10, OutputTokens: 5}},
		{Type: vocab.ChunkFinish, Finish: &vocab.FinishReason{Kind: vocab.FinishToolCalls}},
	}
	want := []string{
		`{"type":"block-start","index":0,"blockType":"tool-call"}`,
		`{"type":"tool-call-delta","index":0,"id":"call_bg_start","name":"subagent","argumentsDelta":"{\"description\": \"Reply with CHILD_OK\", \"prompt\": \"Reply with exactly the word CHILD_OK and nothing else.\", \"run_in_background\": true}"}`,
		`{"type":"block-end","index":0,"block":{"type":"tool-call","id":"call_bg_start","name":"subagent","arguments":"{\"description\": \"Reply with CHILD_OK\", \"prompt\": \"Reply with exactly the word CHILD_OK and nothing else.\", \"run_in_background\": true}"}}`,
		`{"type":"usage","usage":{"inputTokens":10,"outputTokens":5}}`,
		`{"type":"finish","reason":{"kind":"tool-calls"}}`,
	}
	for i, c := range chunks {
		b, err := json.Marshal(c)
		require.NoError(t, err)
		require.Equal(t, want[i], string(b))
	}
}

// TestClientNamesABodyThatIsNoEventStream: a 2xx answer that holds no
// event at all (a server that ignored stream:true and answered one JSON
// completion, or an error object, or a proxy's HTML page) fails as the
// original fails it, STREAM_CLOSED "SSE stream ended without [DONE]", and
// the logged message says what came instead: its content type, its size
// and its start.
func TestClientNamesABodyThatIsNoEventStream(t *testing.T) {
	for _, tt := range []struct{ name, ctype, body, want string }{
		{"an error object", "application/json", `{"error":{"message":"model \"m\" not found"}}`,
			`SSE stream ended without [DONE]: the response held no SSE event: 45 bytes of application/json: {"error":{"message":"model \"m\" not found"}}`},
		{"a page", "text/html", "<html><body>Bad Gateway</body></html>\n",
			"SSE stream ended without [DONE]: the response held no SSE event: 38 bytes of text/html: <html><body>Bad Gateway</body></html>"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", tt.ctype)
				_, _ = io.WriteString(w, tt.body)
			})
			defer srv.Close()
			_, err := collect(context.Background(), llmtest.DeepSeekOn(srv, 0), hello)
			e, ok := llm.FailureOf(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, vocab.Failure{Message: "SSE stream ended without [DONE]", Code: "STREAM_CLOSED"}, e.Failure)
			var logged vocab.Failure
			require.True(t, errors.As(err, &logged))
			require.Equal(t, tt.want, logged.Message)
		})
	}
}

package modelagent_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
	"github.com/dsh-actors/dsh-actors/modelagent"
)

// logBuffer is a slog handler's output, safe to write from turns and read
// from the test.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// TestAnOpenAICompatibleServerGetsNoDeepSeekFields: a loopback base URL
// picks the openai profile; the request has neither thinking nor
// reasoning_effort nor max_tokens, no DeepSeek key is sent, the route is
// openai-compatible, the context window is logged as configured, and a
// prompt that reached it logs a truncation warning.
func TestAnOpenAICompatibleServerGetsNoDeepSeekFields(t *testing.T) {
	t.Setenv("DEEPSEEK_API_KEY", "deepseek-secret")
	t.Setenv("OPENAI_API_KEY", "")
	srv := llmtest.NewServer(
		llmtest.Stream(llmtest.Response{Text: []string{"short"}, Usage: &llmtest.Usage{Prompt: 100, Completion: 1}}),
		llmtest.Stream(llmtest.Response{Text: []string{"cut"}, Usage: &llmtest.Usage{Prompt: 4096, Completion: 1}}),
	)
	defer srv.Close()
	var logs logBuffer
	agents, err := modelagent.New(modelagent.Config{Model: "qwen3:0.6b", BaseURL: srv.URL + "/v1", ContextWindow: 4096, Logger: logs.logger()})
	require.NoError(t, err)
	require.Contains(t, logs.String(), `msg="model agents" model=qwen3:0.6b api=openai baseURL=`+srv.URL+`/v1 provider=openai-compatible contextWindow=4096`)
	r := rigOf(t, agents)
	h := r.turn(t, "ollama", "hi")
	require.NotContains(t, logs.String(), "context window", "100 tokens of 4096: no warning")
	_, err = h.Followup(t.Context(), event.Text("again"), event.Source{Kind: event.SourceUser})
	require.NoError(t, err)
	require.NoError(t, h.Activation().WhenIdle(t.Context()), "waiting for the second turn")
	require.Contains(t, logs.String(), `level=WARN msg="modelagent: the prompt reached the context window: the server may have truncated it`)
	require.Contains(t, logs.String(), `session=ollama model=qwen3:0.6b promptTokens=4096 contextWindow=4096`)

	got := srv.Received()
	require.NotEmpty(t, got)
	body := string(got[0].Body)
	require.NotContains(t, body, `"thinking"`)
	require.NotContains(t, body, `"reasoning_effort"`)
	require.NotContains(t, body, `"max_tokens"`)
	require.Empty(t, got[0].Header.Get("Authorization"), "a DeepSeek key never goes to another server")
	log := events(t, h.Session())
	require.Equal(t, `{"provider":"openai-compatible","model":"qwen3:0.6b","contextWindow":4096}`, ofType(log, "request/context")[0].Raw)
	require.NotContains(t, ofType(log, "request/header")[0].Raw, "reasoningEffort")
}

func TestTheDeepSeekProfileKeepsItsFields(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Stream(llmtest.Say("ok")))
	defer srv.Close()
	var logs logBuffer
	agents, err := modelagent.New(modelagent.Config{Model: "deepseek-v4-flash", API: "deepseek", APIKey: "k", BaseURL: srv.URL, Logger: logs.logger()})
	require.NoError(t, err)
	r := rigOf(t, agents)
	h := r.turn(t, "ds", "hi")
	got := srv.Received()
	require.Len(t, got, 1)
	require.Contains(t, string(got[0].Body), `"thinking":{"type":"enabled"},"reasoning_effort":"high"`)
	require.Equal(t, "Bearer k", got[0].Header.Get("Authorization"))
	require.Equal(t, `{"provider":"deepseek-official","model":"deepseek-v4-flash","contextWindow":1000000}`,
		ofType(events(t, h.Session()), "request/context")[0].Raw)
}

func TestNewRefusesABadServerConfiguration(t *testing.T) {
	t.Setenv("DEEPSEEK_API_KEY", "")
	for _, tt := range []struct {
		cfg  modelagent.Config
		want string
	}{
		{modelagent.Config{Model: "m", API: "anthropic"}, `unknown API profile "anthropic"`},
		{modelagent.Config{Model: "m", BaseURL: "localhost:11434/v1"}, `base URL "localhost:11434/v1" must start with http:// or https://`},
		{modelagent.Config{Model: "m", API: "deepseek", BaseURL: "https://x.io"}, `no DeepSeek API key`},
	} {
		_, err := modelagent.New(tt.cfg)
		require.Error(t, err)
		require.True(t, strings.Contains(err.Error(), tt.want), "%+v: %v", tt.cfg, err)
	}
}

// TestOllamasStreamIsReadAsItSentIt replays, byte for byte, the stream
// Ollama 0.17.4's /v1 endpoint sent for a model with a thinking template
// (testdata/ollama-0.17.4-stream.sse: every delta carries role and
// content, reasoning arrives as "reasoning" beside an empty content, the
// usage comes in a last chunk with no choices): the request carries no
// DeepSeek field, the reasoning and the text are logged as two blocks (the
// empty contents open no text block) and the usage is read.
func TestOllamasStreamIsReadAsItSentIt(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	captured, err := os.ReadFile(filepath.Join("testdata", "ollama-0.17.4-stream.sse"))
	require.NoError(t, err)
	srv := llmtest.NewServer(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(captured)
	})
	defer srv.Close()
	var logs logBuffer
	agents, err := modelagent.New(modelagent.Config{Model: "tiny", BaseURL: srv.URL + "/v1", Logger: logs.logger()})
	require.NoError(t, err)
	h := rigOf(t, agents).turn(t, "ollama", "hi")

	got := srv.Received()
	require.Len(t, got, 1)
	require.Equal(t, "/v1/chat/completions", got[0].Path)
	require.NotContains(t, string(got[0].Body), `"thinking"`)
	require.NotContains(t, string(got[0].Body), `"reasoning_effort"`)
	log := events(t, h.Session())
	message := ofType(log, "assistant/message")
	require.Len(t, message, 1)
	require.Contains(t, message[0].Raw, `"content":[{"type":"reasoning","text":"Let me think"},{"type":"text","text":"Hello from a tiny model."}]`)
	require.Contains(t, message[0].Raw, `"usage":{"inputTokens":6,"outputTokens":12}`)
	var opened []string
	for _, c := range ofType(log, "assistant/chunk") {
		if strings.Contains(c.Raw, `"type":"block-start"`) {
			opened = append(opened, c.Raw)
		}
	}
	require.Len(t, opened, 2, "one reasoning block, one text block")
	require.Contains(t, opened[0], `"blockType":"reasoning"`)
	require.Contains(t, opened[1], `"blockType":"text"`)
	require.Contains(t, ofType(log, "turn/end")[0].Raw, `"reason":{"kind":"completed"}`)
}

package llm_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/llm"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

var update = flag.Bool("update", false, "rewrite the golden request bodies under testdata/profiles")

// profileRequest exercises every field a profile decides: reasoning sent
// back beside a tool call, an effort, an output schema.
var profileRequest = llm.Request{
	Model:  "m",
	System: "be brief",
	Messages: []llm.Message{
		{Role: "user", Content: event.Text("list")},
		{Role: "assistant", Content: []event.Block{{Type: event.BlockReasoning, Text: "plan"},
			event.ToolCallBlock{ID: "c1", Name: "list_agents", Arguments: "{}"}.Block()}},
		{Role: event.RoleTool, ToolCallID: "c1", Content: event.Text("(no subagents)")},
	},
	Tools:           []vocab.ToolSpec{{Name: "list_agents", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}},
	OutputSchema:    json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`),
	ReasoningEffort: llm.EffortHigh,
}

// TestProfilesSendTheirOwnFields: DeepSeek gets thinking, reasoning_effort
// and reasoning_content and no response_format; an OpenAI-compatible
// server gets response_format json_schema and none of DeepSeek's fields,
// and no Authorization without a key. The bodies are golden files.
func TestProfilesSendTheirOwnFields(t *testing.T) {
	for _, tt := range []struct {
		profile, key string
		defaults     llm.Defaults
	}{
		{llm.ProfileDeepSeek, "k", llm.DefaultDeepSeek},
		{llm.ProfileOpenAI, "", llm.DefaultOpenAI},
	} {
		t.Run(tt.profile, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Stream(llmtest.Say("x")), llmtest.Stream(llmtest.Say("x")))
			defer srv.Close()
			c, err := llm.NewDeepSeek(llm.Config{Profile: tt.profile, BaseURL: srv.URL + "/v1", APIKey: tt.key, Defaults: tt.defaults})
			require.NoError(t, err)
			_, err = collect(context.Background(), c, profileRequest)
			require.NoError(t, err)
			plain := profileRequest
			plain.ReasoningEffort, plain.OutputSchema = "", nil
			_, err = collect(context.Background(), c, plain)
			require.NoError(t, err)
			got := srv.Received()
			require.Len(t, got, 2)
			require.Equal(t, tt.key != "", got[0].Header.Get("Authorization") != "", "a bearer token only with a key")
			body := string(got[0].Body) + "\n" + string(got[1].Body) + "\n"
			golden := filepath.Join("testdata", "profiles", tt.profile+".jsonl")
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(body), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			require.Equal(t, string(want), body)
		})
	}
}

func TestTheProfileFollowsTheBaseURL(t *testing.T) {
	require.Equal(t, llm.ProfileDeepSeek, llm.ProfileFor("https://api.deepseek.com"))
	require.Equal(t, llm.ProfileDeepSeek, llm.ProfileFor("https://api.deepseek.com/v1"))
	require.Equal(t, llm.ProfileOpenAI, llm.ProfileFor("http://127.0.0.1:11434/v1"))
	require.Equal(t, llm.ProfileOpenAI, llm.ProfileFor("https://notdeepseek.com/v1"))
	require.Equal(t, "INVALID_CONFIG", codeOf(llm.CheckProfile("anthropic")))
	require.NoError(t, llm.CheckProfile(""))
}

func TestABadBaseURLIsRefusedAtStart(t *testing.T) {
	for url, want := range map[string]string{
		"localhost:11434/v1":         `base URL "localhost:11434/v1" must start with http:// or https://`,
		"127.0.0.1:11434":            `base URL "127.0.0.1:11434" is not a URL`,
		"ftp://example.com":          `must start with http:// or https://`,
		"http://":                    `base URL "http:" names no host`,
		"http://h/v1?x=1":            `must have no query or fragment`,
		"http://[::1]:11434/v1%zz":   `is not a URL`,
		"https://api.example.com/v1": ``,
	} {
		_, err := llm.NewDeepSeek(llm.Config{Profile: llm.ProfileOpenAI, BaseURL: url})
		if want == "" {
			require.NoError(t, err, url)
			continue
		}
		require.ErrorContains(t, err, want, url)
		require.Equal(t, "INVALID_CONFIG", codeOf(err), url)
	}
}

// TestAnHTTPErrorNamesTheURLAndStatus: the failure's message stays the
// server's (or "… API error (HTTP n)"), and its cause chain, which the
// log records, names the status and the URL.
func TestAnHTTPErrorNamesTheURLAndStatus(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Status(404, `{"error":{"message":"404 page not found"}}`))
	defer srv.Close()
	c, err := llm.NewDeepSeek(llm.Config{Profile: llm.ProfileOpenAI, BaseURL: srv.URL})
	require.NoError(t, err)
	_, err = collect(context.Background(), c, hello)
	f, ok := llm.FailureOf(err)
	require.True(t, ok)
	require.Equal(t, "404 page not found", f.Message)
	require.Equal(t, 404, f.Status)
	require.Equal(t, "404 page not found: HTTP 404 from POST "+srv.URL+"/chat/completions"+
		" (most OpenAI-compatible servers serve under /v1: is the base URL missing it?)", err.Error())
	var logged vocab.Failure
	require.ErrorAs(t, err, &logged)
	require.Contains(t, logged.Message, "HTTP 404 from POST "+srv.URL+"/chat/completions")
}

// TestReasoningIsReadFromEitherField: reasoning_content (DeepSeek) and
// reasoning (Ollama, vLLM) both become reasoning deltas.
func TestReasoningIsReadFromEitherField(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning"} {
		body := `data: {"choices":[{"delta":{"` + field + `":"think"}}]}` + "\n\n" +
			`data: {"choices":[{"delta":{"` + field + `":"ing","content":"hi"},"finish_reason":"stop"}]}` + "\n\n" +
			"data: [DONE]\n\n"
		var a llm.Assembler
		for chunk, err := range llm.ReadStream(strings.NewReader(body)) {
			require.NoError(t, err, field)
			a.Push(chunk)
		}
		require.Equal(t, []event.Block{{Type: event.BlockReasoning, Text: "thinking"}, event.Text("hi")[0]}, a.Blocks(), field)
	}
}

package llmtest_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dsh-actors/dsh-actors/internal/llmtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestAResponseReadsBackAsItsChunks(t *testing.T) {
	require.Len(t, llmtest.Chunks(llmtest.Say("x")), 5)
}

func TestResponseEventsAreAChatCompletionsStream(t *testing.T) {
	events := llmtest.Response{Text: []string{"a"}, Calls: []llmtest.Call{{ID: "c", Name: "n", Args: []string{"{", "}"}}},
		Usage: &llmtest.Usage{Prompt: 2, Completion: 1}}.Events()
	require.Equal(t, []string{
		`{"choices":[{"delta":{"content":"","role":"assistant"},"index":0}],"id":"chatcmpl-test","model":"test","object":"chat.completion.chunk"}`,
		`{"choices":[{"delta":{"content":"a"},"index":0}],"id":"chatcmpl-test","model":"test","object":"chat.completion.chunk"}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{","name":"n"},"id":"c","index":0,"type":"function"}]},"index":0}],"id":"chatcmpl-test","model":"test","object":"chat.completion.chunk"}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"}"},"index":0}]},"index":0}],"id":"chatcmpl-test","model":"test","object":"chat.completion.chunk"}`,
		`{"choices":[{"delta":{},"finish_reason":"tool_calls","index":0}],"id":"chatcmpl-test","model":"test","object":"chat.completion.chunk"}`,
		`{"choices":[],"id":"chatcmpl-test","object":"chat.completion.chunk","usage":{"completion_tokens":1,"prompt_tokens":2,"total_tokens":3}}`,
		`[DONE]`,
	}, events)
}

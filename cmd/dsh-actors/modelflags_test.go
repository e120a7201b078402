package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/llmtest"
)

// TestModelFlagsChooseTheServer: --api, --base-url and --context-window
// reach the request; a bad API or base URL fails before anything runs.
func TestModelFlagsChooseTheServer(t *testing.T) {
	t.Setenv("DEEPSEEK_API_KEY", "deepseek-secret")
	srv := llmtest.NewServer(llmtest.Stream(llmtest.Say("ahoy")))
	defer srv.Close()
	store := t.TempDir()
	code, stdout, stderr := run(t, "run", "--model", "qwen3:0.6b", "--base-url", srv.URL+"/v1", "--context-window", "8192", "--store", store, "hi")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "ahoy")
	got := srv.Received()
	require.Len(t, got, 1)
	require.Equal(t, "/v1/chat/completions", got[0].Path)
	require.NotContains(t, string(got[0].Body), `"thinking"`)
	require.Empty(t, got[0].Header.Get("Authorization"))

	code, _, stderr = run(t, "run", "--model", "m", "--api", "anthropic", "--store", store, "hi")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `unknown API profile "anthropic" (want deepseek or openai)`)
	code, _, stderr = run(t, "run", "--model", "m", "--base-url", "localhost:11434/v1", "--store", store, "hi")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `base URL "localhost:11434/v1" must start with http:// or https://`)
	require.Len(t, srv.Received(), 1, "a refused configuration sends nothing")
}

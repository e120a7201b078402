package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/llmtest"
)

// TestModelFlagsChooseTheServer: --api, --base-url and --context-window
// reach the request, and run names them at start; a bad API or base URL
// fails before anything runs.
func TestModelFlagsChooseTheServer(t *testing.T) {
	t.Setenv("DEEPSEEK_API_KEY", "deepseek-secret")
	srv := llmtest.NewServer(llmtest.Stream(llmtest.Say("ahoy")))
	defer srv.Close()
	store := t.TempDir()
	code, stdout, stderr := run(t, "run", "--model", "qwen3:0.6b", "--base-url", srv.URL+"/v1", "--context-window", "8192", "--store", store, "hi")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "ahoy")
	require.Contains(t, stderr, `msg="model agents" model=qwen3:0.6b api=openai baseURL=`+srv.URL+`/v1 `,
		"run prints the model, the API and the base URL at start")
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

type echoIn struct {
	Text string `json:"text"`
}

// TestRunUsesTheMCPServersOfItsFile: --mcp FILE gives the model the
// file's servers' tools; a bad file fails before anything runs.
func TestRunUsesTheMCPServersOfItsFile(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "Echo."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	mcpSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(mcpSrv.Close)
	file := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"mcpServers":{"remote":{"url":"`+mcpSrv.URL+`"}}}`), 0o600))

	model := llmtest.NewServer(
		llmtest.Stream(llmtest.CallTools(llmtest.Call{ID: "e", Name: "mcp__remote__echo", Args: []string{`{"text":"via mcp"}`}})),
		llmtest.Stream(llmtest.Say("done")))
	defer model.Close()
	code, stdout, stderr := run(t, "run", "--model", "m", "--base-url", model.URL, "--mcp", file, "--store", t.TempDir(), "echo")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "echo: via mcp", "the first turn waits for the servers' first connection")

	code, _, stderr = run(t, "run", "--model", "m", "--base-url", model.URL, "--mcp", filepath.Join(t.TempDir(), "none.json"), "--store", t.TempDir(), "x")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "none.json")
}

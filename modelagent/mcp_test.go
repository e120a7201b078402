package modelagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
	"github.com/dsh-actors/dsh-actors/modelagent"
)

// mcpServerEnv, set, makes the test binary serve testMCPServer on stdio.
const mcpServerEnv = "MODELAGENT_TEST_MCP_SERVER"

// mcpGateEnv names a file whose presence makes the stdio server exit at
// once instead of serving: its connections fail until the file is gone.
const mcpGateEnv = "MODELAGENT_TEST_MCP_GATE"

type echoArgs struct {
	Text string `json:"text"`
}

type envArgs struct {
	Names []string `json:"names"`
}

type sumArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

type sumOut struct {
	Sum int `json:"sum"`
}

// testMCPServer has echo (text), sum (structured content only), fail
// (isError) and die (the process exits mid-call).
func testMCPServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sum", Description: "Add two integers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in sumArgs) (*mcp.CallToolResult, sumOut, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}}, sumOut{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fail."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it failed"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Report environment variables."},
		func(_ context.Context, _ *mcp.CallToolRequest, in envArgs) (*mcp.CallToolResult, any, error) {
			var lines []string
			for _, name := range in.Names {
				value, set := os.LookupEnv(name)
				lines = append(lines, fmt.Sprintf("%s=%q set=%v", name, value, set))
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(lines, "\n")}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "die", Description: "Exit mid-call."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	return s
}

// serveStdioMCP serves testMCPServer on stdin/stdout until stdin closes;
// it exits at once while the gate file (mcpGateEnv) exists.
func serveStdioMCP() {
	if gate := os.Getenv(mcpGateEnv); gate != "" {
		if _, err := os.Stat(gate); err == nil {
			os.Exit(4)
		}
	}
	if err := testMCPServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		os.Exit(1)
	}
}

// stdioServer is the test binary as a stdio MCP server.
func stdioServer(t testing.TB) modelagent.MCPServer {
	exe, err := os.Executable()
	require.NoError(t, err)
	return modelagent.MCPServer{Command: exe, Args: []string{"-test.run=^$"}, Env: map[string]string{mcpServerEnv: "1"}}
}

// mcpAgents are model agents over client with servers; they are closed
// after the rig's runtime.
func mcpAgents(t *testing.T, client *llmtest.Client, servers map[string]modelagent.MCPServer) (*modelagent.Agents, *rig) {
	t.Helper()
	retry := rigRetry()
	agents, err := modelagent.NewOverChecked(modelagent.Config{Model: "deepseek-v4-flash", Retry: &retry, MCPServers: servers},
		client, func() float64 { return 0.5 })
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, agents.Close()) })
	return agents, rigOf(t, agents)
}

// waitForTools waits until the agents list every one of names.
func waitForTools(t *testing.T, agents *modelagent.Agents, names ...string) {
	t.Helper()
	require.Eventually(t, func() bool {
		listed := agents.MCPTools()
		for _, n := range names {
			if !slices.Contains(listed, n) {
				return false
			}
		}
		return true
	}, 20*time.Second, time.Millisecond, "waiting for the MCP tools %v", names)
}

// TestMCPToolsOverStdio: a stdio server's tools are offered under
// mcp__<server>__<tool> with their schemas; text, structured content and
// isError map to tool results; a server that dies mid-call fails that
// call, is reconnected, and its tools work again.
func TestMCPToolsOverStdio(t *testing.T) {
	client := llmtest.NewClient(
		llmtest.Reply(llmtest.CallTools(
			llmtest.Call{ID: "e", Name: "mcp__local__echo", Args: []string{`{"text":"hi"}`}},
			llmtest.Call{ID: "s", Name: "mcp__local__sum", Args: []string{`{"a":2,"b":3}`}},
			llmtest.Call{ID: "f", Name: "mcp__local__fail", Args: []string{`{}`}},
			llmtest.Call{ID: "bad", Name: "mcp__local__sum", Args: []string{`{"a":"two"}`}},
		)),
		llmtest.Reply(llmtest.Say("done")),
		llmtest.Reply(llmtest.CallTools(llmtest.Call{ID: "d", Name: "mcp__local__die", Args: []string{`{}`}})),
		llmtest.Reply(llmtest.Say("it died")),
		llmtest.Reply(llmtest.CallTools(llmtest.Call{ID: "again", Name: "mcp__local__echo", Args: []string{`{"text":"back"}`}})),
		llmtest.Reply(llmtest.Say("back")),
	)
	agents, r := mcpAgents(t, client, map[string]modelagent.MCPServer{"local": stdioServer(t)})
	waitForTools(t, agents, "mcp__local__echo", "mcp__local__sum", "mcp__local__fail", "mcp__local__die")

	h := r.turn(t, "mcp-stdio", "use the tools")
	specs := client.Requests()[0].Tools
	require.Contains(t, toolNames(specs), "mcp__local__echo")
	for _, s := range specs {
		if s.Name == "mcp__local__sum" {
			require.Equal(t, "Add two integers.", s.Description)
			require.Contains(t, string(s.Parameters), `"a":{"type":"integer"}`)
		}
	}
	results := ofType(events(t, h.Session()), "tool/result")
	require.Len(t, results, 4)
	require.Contains(t, results[0].Raw, `"text":"echo: hi"}],"isError":false`)
	require.Contains(t, results[1].Raw, `"text":"{\"sum\":5}"}],"isError":false`)
	require.Contains(t, results[2].Raw, `"text":"Error: it failed"}],"isError":true`)
	require.Contains(t, results[3].Raw, `Error: invalid arguments: `)
	require.Contains(t, results[3].Raw, `\"a\" must be an integer`)

	require.Equal(t, 1, agents.MCPConnects("local"))
	died := r.turnAgain(t, h, "die")
	require.Contains(t, died[0].Raw, `"isError":true`)
	require.Contains(t, died[0].Raw, `MCP server \"local\"`)
	require.Eventually(t, func() bool { return agents.MCPConnects("local") == 2 }, 20*time.Second, time.Millisecond,
		"waiting for the stdio server to be reconnected")
	back := r.turnAgain(t, h, "again")
	require.Contains(t, back[0].Raw, `"text":"echo: back"}],"isError":false`)
}

// TestMCPToolFailsWhileItsServerIsDownAndWorksAfterReconnect: while a
// stdio server that died cannot be restarted, the agents retry it with a
// doubling delay and a call of its tool fails at once with an error naming
// the server and why it is down; once it starts again, the same tool works.
func TestMCPToolFailsWhileItsServerIsDownAndWorksAfterReconnect(t *testing.T) {
	client := llmtest.NewClient(
		llmtest.Reply(llmtest.CallTools(llmtest.Call{ID: "d", Name: "mcp__local__die", Args: []string{`{}`}})),
		llmtest.Reply(llmtest.Say("it died")),
		llmtest.Reply(llmtest.CallTools(llmtest.Call{ID: "down", Name: "mcp__local__echo", Args: []string{`{"text":"anyone?"}`}})),
		llmtest.Reply(llmtest.Say("down")),
		llmtest.Reply(llmtest.CallTools(llmtest.Call{ID: "up", Name: "mcp__local__echo", Args: []string{`{"text":"back"}`}})),
		llmtest.Reply(llmtest.Say("back")),
	)
	gate := filepath.Join(t.TempDir(), "gate")
	server := stdioServer(t)
	server.Env[mcpGateEnv] = gate
	logs := &recordingHandler{}
	retry := rigRetry()
	agents, err := modelagent.NewOverChecked(modelagent.Config{Model: "deepseek-v4-flash", Retry: &retry, Logger: slog.New(logs),
		MCPServers: map[string]modelagent.MCPServer{"local": server}}, client, func() float64 { return 0.5 })
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, agents.Close()) })
	r := rigOf(t, agents)
	waitForTools(t, agents, "mcp__local__echo", "mcp__local__die")

	require.NoError(t, os.WriteFile(gate, nil, 0o600)) // from now on the server cannot start
	h := r.turn(t, "mcp-down", "die")
	reconnecting := func() []slog.Record { return logs.withMessage("modelagent: MCP server unavailable, reconnecting") }
	require.Eventually(t, func() bool { return len(reconnecting()) >= 2 }, 20*time.Second, time.Millisecond,
		"waiting for a failed reconnection of the dead server")
	require.True(t, agents.MCPDown("local"))

	down := r.turnAgain(t, h, "while down")
	require.Len(t, down, 1)
	require.Contains(t, down[0].Raw, `"text":"Error: MCP server \"local\" is unavailable (reconnecting): `)
	require.Contains(t, down[0].Raw, `"isError":true`)
	records := reconnecting()
	require.Equal(t, []any{"local", "local"}, []any{attr(records[0], "server"), attr(records[1], "server")})
	require.Equal(t, []any{100 * time.Millisecond, 200 * time.Millisecond}, []any{attr(records[0], "retryIn"), attr(records[1], "retryIn")},
		"the delay doubles between attempts")

	require.NoError(t, os.Remove(gate))
	require.Eventually(t, func() bool { return agents.MCPConnects("local") == 2 }, 30*time.Second, time.Millisecond,
		"waiting for the server to be reconnected once it can start")
	back := r.turnAgain(t, h, "again")
	require.Len(t, back, 1)
	require.Contains(t, back[0].Raw, `"text":"echo: back"}],"isError":false`)
}

// recordingHandler is a slog handler keeping every record.
type recordingHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}

func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

// withMessage returns the records logged with message, in order.
func (h *recordingHandler) withMessage(message string) []slog.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []slog.Record
	for _, r := range h.records {
		if r.Message == message {
			out = append(out, r)
		}
	}
	return out
}

// attr is the value of r's attribute key (nil when absent).
func attr(r slog.Record, key string) any {
	var v any
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.Any()
			return false
		}
		return true
	})
	return v
}

// turnAgain sends h another prompt, waits until it is idle and returns
// the tool results of that turn.
func (r *rig) turnAgain(t *testing.T, h interface {
	ID() string
}, prompt string) []logged {
	t.Helper()
	live := r.rt.Registry().Get(h.ID())
	require.NotNil(t, live)
	before := len(ofType(events(t, live.Session()), "tool/result"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := live.Followup(ctx, event.Text(prompt), event.Source{Kind: event.SourceUser})
	require.NoError(t, err)
	require.NoError(t, live.Activation().WhenIdle(ctx), "waiting for the turn %q", prompt)
	return ofType(events(t, live.Session()), "tool/result")[before:]
}

// TestMCPToolsOverStreamableHTTPFollowTheToolList: an HTTP server's tools
// are offered, sent their headers, and a tool added later is offered after
// tools/list_changed.
func TestMCPToolsOverStreamableHTTPFollowTheToolList(t *testing.T) {
	server := testMCPServer()
	var auth atomic.Value
	auth.Store("")
	handler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		auth.Store(r.Header.Get("Authorization"))
		return server
	}, nil)
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close) // after the agents close their session's stream
	client := llmtest.NewClient(
		llmtest.Reply(llmtest.CallTools(llmtest.Call{ID: "e", Name: "mcp__remote__echo", Args: []string{`{"text":"over http"}`}})),
		llmtest.Reply(llmtest.Say("done")),
		llmtest.Reply(llmtest.CallTools(llmtest.Call{ID: "n", Name: "mcp__remote__late", Args: []string{`{}`}})),
		llmtest.Reply(llmtest.Say("done")),
	)
	agents, r := mcpAgents(t, client, map[string]modelagent.MCPServer{
		"remote": {URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer mcp-token"}}})
	waitForTools(t, agents, "mcp__remote__echo")
	require.Equal(t, "Bearer mcp-token", auth.Load())

	h := r.turn(t, "mcp-http", "echo")
	require.Contains(t, ofType(events(t, h.Session()), "tool/result")[0].Raw, `"text":"echo: over http"}],"isError":false`)

	mcp.AddTool(server, &mcp.Tool{Name: "late", Description: "Added later."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late tool"}}}, nil, nil
		})
	waitForTools(t, agents, "mcp__remote__late")
	late := r.turnAgain(t, h, "late")
	require.Contains(t, late[0].Raw, `"text":"late tool"}],"isError":false`)
	require.Contains(t, toolNames(client.Requests()[2].Tools), "mcp__remote__late")
}

// TestMCPToolNamesAreNormalisedAndStable: a clean name is kept; one with
// other characters or over 64 characters is normalised and gets a hash of
// the (server, tool) identity, so distinct tools never share a name.
func TestMCPToolNamesAreNormalisedAndStable(t *testing.T) {
	require.Equal(t, "mcp__fs__read_file", modelagent.MCPToolName("fs", "read_file"))
	dotted := modelagent.MCPToolName("fs", "read.file")
	require.Equal(t, "mcp__fs__read_file_", dotted[:len("mcp__fs__read_file_")])
	require.Len(t, dotted, len("mcp__fs__read_file_")+12)
	require.Equal(t, dotted, modelagent.MCPToolName("fs", "read.file"), "stable")
	require.NotEqual(t, dotted, modelagent.MCPToolName("fs", "read/file"), "distinct identities, distinct names")
	long := modelagent.MCPToolName("server", strings.Repeat("x", 80))
	require.Len(t, long, 64)
	require.Regexp(t, `^mcp__server__x{38}_[0-9a-f]{12}$`, long)
	require.Regexp(t, `^mcp__s__a___[0-9a-f]{12}$`, modelagent.MCPToolName("s", "a😀"), "a character beyond the BMP is two UTF-16 units")
	for _, n := range []string{dotted, long} {
		require.Regexp(t, `^[A-Za-z0-9_-]{1,64}$`, n)
	}
}

// TestReadMCPConfig reads the common mcpServers file and refuses a server
// that is neither a command nor a URL.
func TestReadMCPConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "mcp.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"mcpServers":{
		"fs":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/tmp"],"env":{"A":"1"}},
		"remote":{"url":"http://127.0.0.1:9/mcp","headers":{"Authorization":"Bearer x"}}}}`), 0o600))
	servers, err := modelagent.ReadMCPConfig(good)
	require.NoError(t, err)
	require.Equal(t, modelagent.MCPServer{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"}, Env: map[string]string{"A": "1"}}, servers["fs"])
	require.Equal(t, "http://127.0.0.1:9/mcp", servers["remote"].URL)

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"mcpServers":{"both":{"command":"x","url":"http://h"}}}`), 0o600))
	_, err = modelagent.ReadMCPConfig(bad)
	require.ErrorContains(t, err, `MCP server "both" needs either a command or a url`)
	_, err = modelagent.ReadMCPConfig(filepath.Join(dir, "missing.json"))
	require.ErrorContains(t, err, "missing.json")

	for name, want := range map[string]string{
		"":                      `MCP server "": a name must match ^[A-Za-z0-9_-]{1,32}$`,
		"my server":             `MCP server "my server": a name must match ^[A-Za-z0-9_-]{1,32}$`,
		"fs.local":              `MCP server "fs.local": a name must match ^[A-Za-z0-9_-]{1,32}$`,
		strings.Repeat("x", 33): `MCP server "` + strings.Repeat("x", 33) + `": a name must match ^[A-Za-z0-9_-]{1,32}$`,
	} {
		file := filepath.Join(dir, "name.json")
		config, err := json.Marshal(map[string]any{"mcpServers": map[string]any{name: map[string]string{"command": "x"}}})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(file, config, 0o600))
		_, err = modelagent.ReadMCPConfig(file)
		require.ErrorContains(t, err, "MCP config "+file+": "+want, "the name %q is refused when read, naming the file", name)
		_, err = modelagent.New(modelagent.Config{Model: "m", APIKey: "k", MCPServers: map[string]modelagent.MCPServer{name: {Command: "x"}}})
		require.ErrorContains(t, err, want, "and when given to New")
	}
	longest := filepath.Join(dir, "longest.json")
	require.NoError(t, os.WriteFile(longest, []byte(`{"mcpServers":{"A-z_09`+strings.Repeat("x", 26)+`":{"command":"x"}}}`), 0o600))
	_, err = modelagent.ReadMCPConfig(longest)
	require.NoError(t, err, "32 letters, digits, _ and - make a name")

	for url, want := range map[string]string{
		"127.0.0.1:9/mcp": `MCP server "x": url "127.0.0.1:9/mcp" is not a URL`,
		"not a url":       `MCP server "x": url "not a url" must start with http:// or https://`,
		"ftp://h/mcp":     `MCP server "x": url "ftp://h/mcp" must start with http:// or https://`,
		"http:///mcp":     `MCP server "x": url "http:///mcp" names no host`,
	} {
		file := filepath.Join(dir, "url.json")
		require.NoError(t, os.WriteFile(file, []byte(`{"mcpServers":{"x":{"url":"`+url+`"}}}`), 0o600))
		_, err = modelagent.ReadMCPConfig(file)
		require.ErrorContains(t, err, want, "the url %q is refused when read, not retried for ever", url)
		_, err = modelagent.New(modelagent.Config{Model: "m", APIKey: "k", MCPServers: map[string]modelagent.MCPServer{"x": {URL: url}}})
		require.ErrorContains(t, err, want, "and when given to New")
	}
}

// BenchmarkMCPStdioCall: one call of the stdio test server's echo tool
// through the agents' MCP tool (validation, JSON-RPC over the pipe, the
// result mapped to text) against calling the same Go function directly;
// mcp/direct is the ratio measured in this run.
func BenchmarkMCPStdioCall(b *testing.B) {
	retry := rigRetry()
	agents, err := modelagent.NewOverChecked(modelagent.Config{Model: "m", Retry: &retry,
		MCPServers: map[string]modelagent.MCPServer{"local": stdioServer(b)}}, llmtest.NewClient(), func() float64 { return 0.5 })
	require.NoError(b, err)
	defer agents.Close()
	echo := func(_ context.Context, in echoArgs) string { return "echo: " + in.Text }
	ctx := context.Background()
	start := time.Now()
	for range b.N {
		if echo(ctx, echoArgs{Text: "hi"}) != "echo: hi" {
			b.Fatal("direct call")
		}
	}
	direct := time.Since(start)
	b.ResetTimer()
	start = time.Now()
	for range b.N {
		text, err := agents.CallMCP(ctx, "mcp__local__echo", `{"text":"hi"}`)
		if err != nil || text != "echo: hi" {
			b.Fatalf("mcp call: %q %v", text, err)
		}
	}
	viaMCP := time.Since(start)
	n := float64(b.N)
	b.ReportMetric(float64(direct.Nanoseconds())/n, "direct-ns/call")
	b.ReportMetric(float64(viaMCP.Nanoseconds())/n, "mcp-ns/call")
	b.ReportMetric(float64(viaMCP)/float64(max(direct, 1)), "mcp/direct")
}

// TestAnMCPCallThatHangsTimesOut: a tool call the server never answers
// fails once the call timeout passes (60 s unless a test shortens it),
// with the original's words for a timed-out request, and the server's
// other tools keep working.
func TestAnMCPCallThatHangsTimesOut(t *testing.T) {
	server := testMCPServer()
	release := make(chan struct{})
	mcp.AddTool(server, &mcp.Tool{Name: "hang", Description: "Never answer."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			select {
			case <-ctx.Done():
			case <-release:
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "too late"}}}, nil, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	modelagent.SetMCPCallTimeout(t, 200*time.Millisecond)
	agents, err := modelagent.NewOverChecked(modelagent.Config{Model: "m",
		MCPServers: map[string]modelagent.MCPServer{"remote": {URL: srv.URL}}}, llmtest.NewClient(), func() float64 { return 0.5 })
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, agents.Close()) })
	waitForTools(t, agents, "mcp__remote__hang", "mcp__remote__echo")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = agents.CallMCP(ctx, "mcp__remote__hang", `{}`)
	require.EqualError(t, err, `Error: MCP server "remote": hang: MCP error -32001: Request timed out`)
	require.NoError(t, ctx.Err(), "the call timed out on its own, long before the test's deadline")
	// The next call answers at once, but a loaded machine can take longer
	// than the short timeout to carry it: only the test's deadline bounds it.
	modelagent.SetMCPCallTimeout(t, time.Minute)
	text, err := agents.CallMCP(ctx, "mcp__remote__echo", `{"text":"still here"}`)
	require.NoError(t, err)
	require.Equal(t, "echo: still here", text)
}

// TestMCPResultsThatAreNotTextReadAsTheOriginalWordsThem: content the
// model cannot read is named in brackets, in the original client's words,
// one line per block; a result with no content at all says so.
func TestMCPResultsThatAreNotTextReadAsTheOriginalWordsThem(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "media", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "media", Description: "Every kind of content."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "a caption"},
				&mcp.ImageContent{MIMEType: "image/png", Data: []byte{1}},
				&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte{2}},
				&mcp.ResourceLink{Name: "notes", URI: "file:///notes.txt"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a.txt", Text: "inline"}},
			}}, nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "empty", Description: "No content."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}}, nil, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(srv.Close)
	agents, err := modelagent.NewOverChecked(modelagent.Config{Model: "m",
		MCPServers: map[string]modelagent.MCPServer{"m": {URL: srv.URL}}}, llmtest.NewClient(), func() float64 { return 0.5 })
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, agents.Close()) })
	waitForTools(t, agents, "mcp__m__media", "mcp__m__empty")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	text, err := agents.CallMCP(ctx, "mcp__m__media", `{}`)
	require.NoError(t, err)
	require.Equal(t, "a caption\n[image: image/png, content discarded]\n[audio: audio/wav, content discarded]\n"+
		"[resource: content discarded]\n[resource: content discarded]", text)
	text, err = agents.CallMCP(ctx, "mcp__m__empty", `{}`)
	require.NoError(t, err)
	require.Equal(t, "(empty returned no text content)", text)
}

// TestMCPServersWhoseToolNamesClashDoNotBreakTheTurn: server "a"'s tool
// "b__c" and server "a__b"'s tool "c" are both mcp__a__b__c; as the
// original's client refuses the registration that clashes, the server
// later in name order offers none of its tools (and says why), and every
// turn goes on with the others.
func TestMCPServersWhoseToolNamesClashDoNotBreakTheTurn(t *testing.T) {
	serve := func(tools ...string) string {
		server := mcp.NewServer(&mcp.Implementation{Name: "clash", Version: "1"}, nil)
		for _, name := range tools {
			mcp.AddTool(server, &mcp.Tool{Name: name, Description: "Tool " + name + "."},
				func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + name}}}, nil, nil
				})
		}
		srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	client := llmtest.NewClient(
		llmtest.Reply(llmtest.CallTools(llmtest.Call{ID: "x", Name: "mcp__a__b__c", Args: []string{`{}`}})),
		llmtest.Reply(llmtest.Say("done")),
	)
	logs := &recordingHandler{}
	retry := rigRetry()
	agents, err := modelagent.NewOverChecked(modelagent.Config{Model: "m", Retry: &retry, Logger: slog.New(logs),
		MCPServers: map[string]modelagent.MCPServer{"a": {URL: serve("b__c")}, "a__b": {URL: serve("c", "d")}}},
		client, func() float64 { return 0.5 })
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, agents.Close()) })
	r := rigOf(t, agents)
	require.Eventually(t, func() bool { return agents.MCPConnects("a") == 1 && agents.MCPConnects("a__b") == 1 },
		20*time.Second, time.Millisecond, "waiting for both servers' tools")

	h := r.turn(t, "mcp-clash", "call it")
	results := ofType(events(t, h.Session()), "tool/result")
	require.Len(t, results, 1, "the turn ran its tool call")
	require.Contains(t, results[0].Raw, `"text":"ran b__c"}],"isError":false`, "server a's tool, listed first")
	offered := toolNames(client.Requests()[0].Tools)
	require.Len(t, slices.DeleteFunc(slices.Clone(offered), func(n string) bool { return n != "mcp__a__b__c" }), 1)
	require.NotContains(t, offered, "mcp__a__b__d", "the clashing server offers none of its tools")
	clashes := logs.withMessage("modelagent: MCP server's tools clash with another server's; none of them offered")
	require.NotEmpty(t, clashes)
	require.Equal(t, "a__b", attr(clashes[0], "server"))
}

// TestMCPStdioServersGetNoCredentials: a stdio server starts with this
// process's environment minus credential-shaped names (KEY, PASSWORD,
// SECRET, TOKEN) and this harness's own DSH_ names, as the original
// starts every child process; what its config's env gives it, it gets.
func TestMCPStdioServersGetNoCredentials(t *testing.T) {
	for name, value := range map[string]string{"DEEPSEEK_API_KEY": "sk-secret", "OPENAI_API_KEY": "sk-other",
		"DSH_ACTORS_TOKEN": "serve-token", "PGPASSWORD": "pw", "MY_SECRET": "s", "PLAIN_SETTING": "plain"} {
		t.Setenv(name, value)
	}
	server := stdioServer(t)
	server.Env["GIVEN_TOKEN"] = "given"
	agents, err := modelagent.NewOverChecked(modelagent.Config{Model: "m",
		MCPServers: map[string]modelagent.MCPServer{"local": server}}, llmtest.NewClient(), func() float64 { return 0.5 })
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, agents.Close()) })
	waitForTools(t, agents, "mcp__local__env")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	text, err := agents.CallMCP(ctx, "mcp__local__env",
		`{"names":["DEEPSEEK_API_KEY","OPENAI_API_KEY","DSH_ACTORS_TOKEN","PGPASSWORD","MY_SECRET","PLAIN_SETTING","GIVEN_TOKEN"]}`)
	require.NoError(t, err)
	require.Equal(t, strings.Join([]string{
		`DEEPSEEK_API_KEY="" set=false`, `OPENAI_API_KEY="" set=false`, `DSH_ACTORS_TOKEN="" set=false`,
		`PGPASSWORD="" set=false`, `MY_SECRET="" set=false`, `PLAIN_SETTING="plain" set=true`, `GIVEN_TOKEN="given" set=true`,
	}, "\n"), text)
}

// TestAnMCPServerListingAToolTwiceIsRefusedWithoutReconnecting: a tool
// list naming one tool twice is the server's error, which a new session
// would repeat. As the original's client, it is refused naming the server
// and the tool, once per listing; the session is kept (the server is
// never reconnected). Refused on its first listing, the server offers no
// tools; a fixed list after tools/list_changed is offered; a later list
// naming a tool twice keeps the last good one.
func TestAnMCPServerListingAToolTwiceIsRefusedWithoutReconnecting(t *testing.T) {
	server := testMCPServer()
	var twice atomic.Bool
	var sessions atomic.Int32
	var listedTwice atomic.Value
	twice.Store(true)
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "initialize" {
				sessions.Add(1)
			}
			result, err := next(ctx, method, req)
			if list, ok := result.(*mcp.ListToolsResult); ok && twice.Load() && len(list.Tools) > 0 {
				list.Tools = append(slices.Clone(list.Tools), list.Tools[0])
				listedTwice.Store(list.Tools[0].Name)
			}
			return result, err
		}
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(srv.Close)
	logs := &recordingHandler{}
	agents, err := modelagent.NewOverChecked(modelagent.Config{Model: "m", Logger: slog.New(logs),
		MCPServers: map[string]modelagent.MCPServer{"dup": {URL: srv.URL}}}, llmtest.NewClient(), func() float64 { return 0.5 })
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, agents.Close()) })
	const refused = "modelagent: MCP server listed a tool more than once; its tool list is refused"
	waitForLogs := func(n int) {
		t.Helper()
		require.Eventually(t, func() bool { return len(logs.withMessage(refused)) >= n }, 20*time.Second, time.Millisecond,
			"waiting for refusal %d of the tool list", n)
	}

	waitForLogs(1)
	first := logs.withMessage(refused)[0]
	require.Equal(t, "dup", attr(first, "server"))
	require.Equal(t, listedTwice.Load(), attr(first, "tool"))
	require.Equal(t, fmt.Sprintf("mcp-client(dup): server listed tool %q more than once — invalid tool list", listedTwice.Load()),
		attr(first, "err"))
	require.Empty(t, agents.MCPTools(), "a first list refused offers nothing")

	twice.Store(false)
	mcp.AddTool(server, &mcp.Tool{Name: "late", Description: "Added later."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late tool"}}}, nil, nil
		})
	waitForTools(t, agents, "mcp__dup__echo", "mcp__dup__late")

	twice.Store(true)
	mcp.AddTool(server, &mcp.Tool{Name: "later", Description: "Added with a broken list."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	waitForLogs(2)
	require.Len(t, logs.withMessage(refused), 2, "once per listing")
	tools := agents.MCPTools()
	require.Contains(t, tools, "mcp__dup__late", "the last good list stays offered")
	require.NotContains(t, tools, "mcp__dup__later")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	text, err := agents.CallMCP(ctx, "mcp__dup__echo", `{"text":"still"}`)
	require.NoError(t, err, "on the same session")
	require.Equal(t, "echo: still", text)
	require.Equal(t, int32(1), sessions.Load(), "the server was never reconnected")
	require.Empty(t, logs.withMessage("modelagent: MCP server unavailable, reconnecting"))
}

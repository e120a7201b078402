package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/llm"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
	"github.com/dsh-actors/dsh-actors/session"
)

// acpClient drives `dsh-actors acp` in this process over pipes and
// records the session updates it is sent.
type acpClient struct {
	conn    *sdk.ClientSideConnection
	stdin   io.WriteCloser
	exited  chan int
	mu      sync.Mutex
	updates []sdk.SessionUpdate
	more    chan struct{}
}

// startACP runs the acp command with args until the test closes its stdin.
func startACP(t *testing.T, args ...string) *acpClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &acpClient{stdin: inW, exited: make(chan int, 1), more: make(chan struct{}, 1)}
	go func() {
		var stderr strings.Builder
		code := acpCommand(context.Background(), args, inR, outW, &stderr)
		if code != 0 {
			t.Errorf("dsh-actors acp exited %d: %s", code, stderr.String())
		}
		_ = outW.Close()
		c.exited <- code
	}()
	c.conn = sdk.NewClientSideConnection(c, inW, outR)
	c.conn.SetLogger(slog.New(slog.DiscardHandler))
	return c
}

// close ends the command (stdin closed) and waits for its exit.
func (c *acpClient) close(t *testing.T) {
	t.Helper()
	require.NoError(t, c.stdin.Close())
	select {
	case <-c.exited:
	case <-time.After(time.Minute):
		t.Fatal("waited a minute for dsh-actors acp to exit after its stdin closed")
	}
	select {
	case <-c.conn.Done():
	case <-time.After(time.Minute):
		t.Fatal("waited a minute for the client connection to end")
	}
}

func (c *acpClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n.Update)
	c.mu.Unlock()
	select {
	case c.more <- struct{}{}:
	default:
	}
	return nil
}

// taken returns the updates recorded so far as JSON lines and forgets them.
func (c *acpClient) taken(t *testing.T) []string {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var lines []string
	for _, u := range c.updates {
		data, err := json.Marshal(u)
		require.NoError(t, err)
		lines = append(lines, string(data))
	}
	c.updates = nil
	return lines
}

// waitForText waits until an update's JSON holds text.
func (c *acpClient) waitForText(t *testing.T, text string) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		c.mu.Lock()
		for _, u := range c.updates {
			if data, _ := json.Marshal(u); strings.Contains(string(data), text) {
				c.mu.Unlock()
				return
			}
		}
		c.mu.Unlock()
		select {
		case <-c.more:
		case <-deadline:
			t.Fatalf("waited a minute for a session update holding %s", text)
		}
	}
}

func (c *acpClient) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodSessionRequestPermission)
}
func (c *acpClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodFsReadTextFile)
}
func (c *acpClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodFsWriteTextFile)
}
func (c *acpClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalCreate)
}
func (c *acpClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalKill)
}
func (c *acpClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalOutput)
}
func (c *acpClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalRelease)
}
func (c *acpClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalWaitForExit)
}

// newSession initializes the connection and opens a session in dir.
func (c *acpClient) newSession(t *testing.T, dir string) sdk.SessionId {
	t.Helper()
	init, err := c.conn.Initialize(bgCtx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	require.NoError(t, err)
	require.True(t, init.AgentCapabilities.LoadSession)
	s, err := c.conn.NewSession(bgCtx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	return s.SessionId
}

// startModelACP starts `dsh-actors acp` with a model agent served by the
// OpenAI-compatible server at url and opens one session on it.
func startModelACP(t *testing.T, url string) (*acpClient, sdk.SessionId) {
	t.Helper()
	t.Setenv(llm.EnvAPIKey, "k")
	t.Setenv(llm.EnvBaseURL, url)
	c := startACP(t, "--model", "deepseek-v4-flash", "--store", t.TempDir())
	return c, c.newSession(t, t.TempDir())
}

// startLongTurn sends session id a prompt whose turn replies "first" and
// then sleeps for an hour, and returns once the reply was streamed; the
// prompt's answer arrives on the returned channel.
func (c *acpClient) startLongTurn(t *testing.T, id sdk.SessionId) <-chan sdk.PromptResponse {
	t.Helper()
	answered := make(chan sdk.PromptResponse, 1)
	go func() {
		resp, err := c.prompt(id, "reply first\nsleep 1h")
		if err != nil {
			t.Errorf("long prompt: %v", err)
		}
		answered <- resp
	}()
	c.waitForText(t, `"first"`)
	return answered
}

// requireCancelled waits up to a minute for a prompt's answer and
// requires it to say cancelled.
func requireCancelled(t *testing.T, answered <-chan sdk.PromptResponse) {
	t.Helper()
	select {
	case resp := <-answered:
		require.Equal(t, sdk.StopReasonCancelled, resp.StopReason)
	case <-time.After(time.Minute):
		t.Fatal("waited a minute for the cancelled prompt's answer")
	}
}

func (c *acpClient) prompt(id sdk.SessionId, text string) (sdk.PromptResponse, error) {
	return c.conn.Prompt(bgCtx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
}

var bgCtx = context.Background()

func TestACPServesPromptsAndLoadsStoredSessions(t *testing.T) {
	store := t.TempDir()
	c := startACP(t, "--store", store)
	dir := t.TempDir()
	id := c.newSession(t, dir)
	resp, err := c.prompt(id, "reply hi there")
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonEndTurn, resp.StopReason)
	require.Equal(t, []string{`{"content":{"text":"hi there","type":"text"},"sessionUpdate":"agent_message_chunk"}`}, c.taken(t))
	resp, err = c.prompt(id, "refuse no")
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonRefusal, resp.StopReason)
	_, err = c.prompt(id, "fail broken tool")
	require.ErrorContains(t, err, "Internal error: turn failed: broken tool")
	_, err = c.prompt("nobody", "reply hi")
	require.ErrorContains(t, err, "unknown session")
	c.close(t)

	c = startACP(t, "--store", store)
	_, err = c.conn.Initialize(bgCtx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	require.NoError(t, err)
	_, err = c.conn.LoadSession(bgCtx, sdk.LoadSessionRequest{SessionId: id, Cwd: dir, McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	replay := c.taken(t)
	require.Equal(t, []string{
		`{"content":{"text":"reply hi there","type":"text"},"sessionUpdate":"user_message_chunk"}`,
		`{"content":{"text":"hi there","type":"text"},"sessionUpdate":"agent_message_chunk"}`,
		`{"content":{"text":"refuse no","type":"text"},"sessionUpdate":"user_message_chunk"}`,
	}, replay[:3])
	resp, err = c.prompt(id, "reply again")
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonEndTurn, resp.StopReason)
	_, err = c.conn.LoadSession(bgCtx, sdk.LoadSessionRequest{SessionId: "nobody", Cwd: t.TempDir(), McpServers: []sdk.McpServer{}})
	require.Error(t, err)
	c.close(t)
}

func TestACPCancelEndsTheRunningTurn(t *testing.T) {
	c := startACP(t, "--store", t.TempDir())
	id := c.newSession(t, t.TempDir())
	answered := c.startLongTurn(t, id)
	require.NoError(t, c.conn.Cancel(bgCtx, sdk.CancelNotification{SessionId: id}))
	requireCancelled(t, answered)
	c.close(t)
}

// A model turn reports its tool call and result, then its committed
// message's text in one chunk (it streamed in two).
func TestACPSendsAModelTurnsToolCallsAndText(t *testing.T) {
	srv := llmtest.NewServer(
		llmtest.Stream(llmtest.CallTools(llmtest.Call{ID: "c1", Name: "list_agents", Args: []string{`{}`}})),
		llmtest.Stream(llmtest.Say("DO", "NE")),
	)
	defer srv.Close()
	c, id := startModelACP(t, srv.URL)
	resp, err := c.prompt(id, "list, then say DONE")
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonEndTurn, resp.StopReason)
	require.Equal(t, []string{
		`{"kind":"other","rawInput":"{}","sessionUpdate":"tool_call","status":"in_progress","title":"list_agents","toolCallId":"c1"}`,
		`{"content":[{"content":{"text":"(no subagents)","type":"text"},"type":"content"}],"sessionUpdate":"tool_call_update","status":"completed","toolCallId":"c1"}`,
		`{"content":{"text":"DONE","type":"text"},"sessionUpdate":"agent_message_chunk"}`,
	}, c.taken(t))
	c.close(t)
}

func TestACPRefusesArguments(t *testing.T) {
	code, _, stderr := run(t, "acp", "extra")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `unexpected argument "extra"`)
	require.Contains(t, stderr, acpUsage)
}

func TestACPFlagRegistersAProviderTheModelsToolRuns(t *testing.T) {
	exampleAgent := filepath.Join(t.TempDir(), "example-agent")
	out, err := exec.Command("go", "build", "-o", exampleAgent, "github.com/coder/acp-go-sdk/example/agent").CombinedOutput()
	require.NoError(t, err, string(out))
	srv := llmtest.NewServer(
		llmtest.Stream(llmtest.CallTools(llmtest.Call{ID: "c1", Name: "subagent_ex",
			Args: []string{`{"description": "edit", "prompt": "edit the config"}`}})),
		llmtest.Stream(llmtest.CallTools(llmtest.Call{ID: "c2", Name: "subagent_ex",
			Args: []string{`{"description": "later", "prompt": "edit it later", "run_in_background": true}`}})),
		llmtest.Stream(llmtest.Say("DONE")),
	)
	defer srv.Close()
	t.Setenv(llm.EnvAPIKey, "k")
	t.Setenv(llm.EnvBaseURL, srv.URL)
	code, stdout, stderr := run(t, "run", "--model", "deepseek-v4-flash", "--store", t.TempDir(),
		"--acp", "ex="+exampleAgent, "delegate, then say DONE")
	require.Equal(t, 0, code, stderr)
	_, _, rest := runOutput(t, stdout)
	lines := strings.Split(rest, "\n")
	require.Equal(t, `[tool subagent_ex {"description": "edit", "prompt": "edit the config"}]`, lines[0])
	require.True(t, strings.HasPrefix(lines[1], "[result] ACP Go Example Agent"), lines[1])
	require.Equal(t, []string{
		`[tool subagent_ex {"description": "later", "prompt": "edit it later", "run_in_background": true}]`,
		"[result] Error: background tasks unavailable: load @deepseek-ai/dsh-tasks and @deepseek-ai/dsh-tool-tasks",
		"DONE", "",
	}, lines[2:], "one-shot only: no continuable ACP child, and no background tasks here")
	var first struct {
		Tools []struct {
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(srv.Received()[0].Body, &first))
	byName := map[string]string{}
	for _, tool := range first.Tools {
		byName[tool.Function.Name] = tool.Function.Description + string(tool.Function.Parameters)
	}
	require.Contains(t, byName, "subagent_ex")
	require.Contains(t, byName["subagent_ex"], "collect with `task_output` and stop with `task_kill`.",
		"the subagent tool over a one-shot provider")
	require.Contains(t, byName["subagent"], "start a long-lived subagent", "spawn's stays continuable")

	code, _, stderr = run(t, "run", "--store", t.TempDir(), "--acp", "nocommand=", "hi")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `--acp wants NAME=COMMAND [ARGS...], got "nocommand="`)
	code, _, stderr = run(t, "run", "--store", t.TempDir(), "--acp", "spawn="+exampleAgent, "reply hi")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `DUPLICATE_PROVIDER: dsh: ACP agent spawn: a subagent provider named "spawn" is already registered`)
}

// session/new with a cwd that is not an absolute path is the client's
// mistake: Invalid params naming the cwd, and no session is made. It was
// an Internal error.
func TestACPNewSessionRefusesARelativeCwd(t *testing.T) {
	store := t.TempDir()
	c := startACP(t, "--store", store)
	_, err := c.conn.Initialize(bgCtx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	require.NoError(t, err)
	for cwd, says := range map[string]string{"relative": "cwd must be an absolute path", "": "cwd is required"} {
		_, err = c.conn.NewSession(bgCtx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
		var refused *sdk.RequestError
		require.ErrorAs(t, err, &refused, "cwd %q", cwd)
		require.Equal(t, -32602, refused.Code, "cwd %q: %v", cwd, err)
		require.ErrorContains(t, err, says, "cwd %q", cwd)
	}
	c.close(t)
	entries, err := os.ReadDir(store)
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, e.IsDir(), "no session folder was made: %s", e.Name())
	}
}

// session/load serves top-level sessions only, in the cwd they were
// made in: a subagent's session is refused as the original's generic
// routes refuse it (owned by subagent routing: it is reached through its
// parent), a cwd other than the session's with the original's
// SessionCwdConflict words, a relative cwd as session/new refuses it;
// each is Invalid params, and none resumes or writes the session.
func TestACPLoadRefusesASubagentSessionAndAnotherCwd(t *testing.T) {
	store, cwd := t.TempDir(), t.TempDir()
	rt, err := dsh.Open(dsh.Options{Dir: store})
	require.NoError(t, err)
	require.NoError(t, rt.OpenSession(bgCtx, dsh.SessionSpec{ID: "top", Cwd: cwd}))
	top, ok := rt.Agent("top")
	require.True(t, ok)
	child, err := rt.Spawn(bgCtx, top, "helper", event.Text("reply ok"))
	require.NoError(t, err)
	require.NoError(t, rt.Close())
	before := map[string]int{}
	for _, id := range []string{"top", child} {
		before[id] = storedEvents(t, store, id)
	}

	c := startACP(t, "--store", store)
	_, err = c.conn.Initialize(bgCtx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	require.NoError(t, err)
	for _, tc := range []struct{ id, cwd, says string }{
		{child, cwd, `session \"` + child + `\" is owned by subagent routing`},
		{"top", t.TempDir(), `session \"top\" already exists with cwd \"` + cwd + `\"; requested \"`},
		{"top", "relative", "cwd must be an absolute path"},
	} {
		_, err := c.conn.LoadSession(bgCtx, sdk.LoadSessionRequest{SessionId: sdk.SessionId(tc.id), Cwd: tc.cwd, McpServers: []sdk.McpServer{}})
		var refused *sdk.RequestError
		require.ErrorAs(t, err, &refused, "%s in %s", tc.id, tc.cwd)
		require.Equal(t, -32602, refused.Code, "%s in %s: %v", tc.id, tc.cwd, err)
		require.ErrorContains(t, err, tc.says, "%s in %s", tc.id, tc.cwd)
		_, err = c.prompt(sdk.SessionId(tc.id), "reply no")
		require.ErrorContains(t, err, "unknown session", "a refused load opens nothing")
	}
	c.close(t)
	for _, id := range []string{"top", child} {
		require.Equal(t, before[id], storedEvents(t, store, id), "%s is as it was", id)
	}
}

// storedEvents is how many events the session id holds in the store.
func storedEvents(t *testing.T, store, id string) int {
	t.Helper()
	s, err := session.OpenJSONL(store)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	log, err := s.Inspect(bgCtx, id)
	require.NoError(t, err)
	return len(log.Events)
}

// A second session/prompt while the session's first is in flight is
// refused with Invalid params, as the original's bridge refuses it, and
// the first turn runs on. It was taken: the SDK cancelled the first
// prompt's context, which cancelled its turn, and the second prompt
// answered with the first turn's ending while its own turn ran unreported.
func TestACPRefusesASecondPromptWhileOneIsInFlight(t *testing.T) {
	c := startACP(t, "--store", t.TempDir())
	id := c.newSession(t, t.TempDir())
	answered := c.startLongTurn(t, id)
	_, err := c.prompt(id, "reply second")
	var refused *sdk.RequestError
	require.ErrorAs(t, err, &refused)
	require.Equal(t, sdk.RequestError{Code: -32602, Message: "Invalid params: a prompt is already in flight for this session"}, *refused)
	select {
	case resp := <-answered:
		t.Fatalf("the first prompt answered %q before it was cancelled", resp.StopReason)
	default:
	}
	require.NoError(t, c.conn.Cancel(bgCtx, sdk.CancelNotification{SessionId: id}))
	requireCancelled(t, answered)
	resp, err := c.prompt(id, "reply third")
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonEndTurn, resp.StopReason)
	require.Contains(t, c.taken(t), `{"content":{"text":"third","type":"text"},"sessionUpdate":"agent_message_chunk"}`)
	c.close(t)
}

// A prompt with no text, or with blocks beyond text and resource links
// (the bridge advertises no image, audio or embedded-context capability),
// is refused with Invalid params before a turn starts, as the original's
// bridge refuses it; nothing is logged. Each ran a turn: an image was
// dropped silently and an empty prompt logged an empty user message.
func TestACPRefusesAnEmptyPromptAndContentBeyondTextAndLinks(t *testing.T) {
	store := t.TempDir()
	c := startACP(t, "--store", store)
	id := c.newSession(t, t.TempDir())
	text := sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: "file:///a", Text: "reply a"}}
	for _, tc := range []struct {
		name   string
		prompt []sdk.ContentBlock
		says   string
	}{
		{"no blocks", []sdk.ContentBlock{}, "empty prompt"},
		{"blank text", []sdk.ContentBlock{sdk.TextBlock(" \n\t")}, "empty prompt"},
		{"an image", []sdk.ContentBlock{sdk.TextBlock("reply a"), sdk.ImageBlock("aGk=", "image/png")}, "only text and resource_link prompt content is supported"},
		{"audio", []sdk.ContentBlock{sdk.AudioBlock("aGk=", "audio/wav")}, "only text and resource_link prompt content is supported"},
		{"an embedded resource", []sdk.ContentBlock{sdk.ResourceBlock(text)}, "only text and resource_link prompt content is supported"},
	} {
		_, err := c.conn.Prompt(bgCtx, sdk.PromptRequest{SessionId: id, Prompt: tc.prompt})
		var refused *sdk.RequestError
		require.ErrorAs(t, err, &refused, tc.name)
		require.Equal(t, sdk.RequestError{Code: -32602, Message: "Invalid params: " + tc.says}, *refused, tc.name)
	}
	c.close(t)
	require.Zero(t, storedEvents(t, store, string(id)), "no turn was logged")
}

// A prompt's blocks are one text as the original's bridge reads them:
// text blocks verbatim, one after another, and a resource link as a
// bracketed reference on its own line. They were joined with blank
// lines, and a link was its bare uri.
func TestACPJoinsAPromptsBlocksAsTheOriginal(t *testing.T) {
	c := startACP(t, "--store", t.TempDir())
	id := c.newSession(t, t.TempDir())
	resp, err := c.conn.Prompt(bgCtx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock("reply a"), sdk.TextBlock("b")}})
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonEndTurn, resp.StopReason)
	require.Equal(t, []string{`{"content":{"text":"ab","type":"text"},"sessionUpdate":"agent_message_chunk"}`}, c.taken(t))
	resp, err = c.conn.Prompt(bgCtx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("look at"), sdk.ResourceLinkBlock("a \"b\"", "file:///x y"), sdk.TextBlock("then")}})
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonEndTurn, resp.StopReason)
	require.Equal(t, []string{`{"content":{"text":"look at\n[resource_link name=\"a \\\"b\\\"\" uri=\"file:///x y\"]\nthen","type":"text"},"sessionUpdate":"agent_message_chunk"}`}, c.taken(t))
	c.close(t)
}

// session/new and session/load refuse what the agent does not serve, as
// the original's bridge refuses it: extra workspace roots and client MCP
// servers are Invalid params naming them, and no session is made. Both
// were accepted and ignored, so the client believed its MCP servers were
// mounted.
func TestACPRefusesMCPServersAndAdditionalDirectories(t *testing.T) {
	store, cwd := t.TempDir(), t.TempDir()
	c := startACP(t, "--store", store)
	id := c.newSession(t, cwd)
	mcp := []sdk.McpServer{{Stdio: &sdk.McpServerStdio{Name: "fs", Command: "/bin/true", Args: []string{}, Env: []sdk.EnvVariable{}}}}
	refused := func(err error, says string) {
		t.Helper()
		var re *sdk.RequestError
		require.ErrorAs(t, err, &re)
		require.Equal(t, sdk.RequestError{Code: -32602, Message: "Invalid params: " + says}, *re)
	}
	_, err := c.conn.NewSession(bgCtx, sdk.NewSessionRequest{Cwd: cwd, McpServers: mcp})
	refused(err, "mcpServers is not supported")
	_, err = c.conn.NewSession(bgCtx, sdk.NewSessionRequest{Cwd: cwd, AdditionalDirectories: []string{cwd}, McpServers: mcp})
	refused(err, "additionalDirectories is not supported")
	_, err = c.conn.LoadSession(bgCtx, sdk.LoadSessionRequest{SessionId: id, Cwd: cwd, McpServers: mcp})
	refused(err, "mcpServers is not supported")
	_, err = c.conn.LoadSession(bgCtx, sdk.LoadSessionRequest{SessionId: id, Cwd: cwd, AdditionalDirectories: []string{cwd}, McpServers: []sdk.McpServer{}})
	refused(err, "additionalDirectories is not supported")
	c.close(t)
	entries, err := os.ReadDir(store)
	require.NoError(t, err)
	folders := 0
	for _, e := range entries {
		if e.IsDir() {
			sessions, err := os.ReadDir(filepath.Join(store, e.Name()))
			require.NoError(t, err)
			folders += len(sessions)
		}
	}
	require.Equal(t, 1, folders, "only the first session was made")
}

// A model call that fails and is retried ends its turn in error and opens
// a retry turn over the same prompt; the prompt answers how the retry
// chain ended, with the retry's text, as the original's bridge holds a
// failed turn's error until the agent is idle and adopts the retry turn.
// It answered "turn failed" at the first turn/end, and the retry's reply
// never reached the client.
func TestACPPromptAnswersTheRetryTurnOfAFailedModelCall(t *testing.T) {
	srv := llmtest.NewServer(
		llmtest.Status(500, `{"error":{"message":"overloaded"}}`),
		llmtest.Stream(llmtest.Say("OK")),
		llmtest.Status(500, `{"error":{"message":"down"}}`),
		llmtest.Status(500, `{"error":{"message":"down"}}`),
		llmtest.Status(500, `{"error":{"message":"still down"}}`),
	)
	defer srv.Close()
	c, id := startModelACP(t, srv.URL)
	resp, err := c.prompt(id, "say OK")
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonEndTurn, resp.StopReason)
	require.Equal(t, []string{`{"content":{"text":"OK","type":"text"},"sessionUpdate":"agent_message_chunk"}`}, c.taken(t))
	_, err = c.prompt(id, "say it again")
	var failed *sdk.RequestError
	require.ErrorAs(t, err, &failed, "every retry failed")
	require.Equal(t, -32603, failed.Code)
	require.Contains(t, failed.Message+fmt.Sprint(failed.Data), "turn failed: still down")
	c.close(t)
}

// The bridge's errors read as the original's: the detail follows the
// JSON-RPC message ("Invalid params: …", "Internal error: …") and there is
// no data. They said only "Invalid params" or "Internal error" and put the
// detail under data.error, so a client showing the message showed nothing
// useful.
func TestACPErrorsCarryTheirDetailInTheMessage(t *testing.T) {
	c := startACP(t, "--store", t.TempDir())
	id := c.newSession(t, t.TempDir())
	refused := func(err error, code int, message string) {
		t.Helper()
		var re *sdk.RequestError
		require.ErrorAs(t, err, &re)
		require.Equal(t, sdk.RequestError{Code: code, Message: message}, *re)
	}
	_, err := c.prompt("nobody", "reply hi")
	refused(err, -32602, "Invalid params: unknown session: nobody")
	_, err = c.conn.NewSession(bgCtx, sdk.NewSessionRequest{Cwd: "relative/dir", McpServers: []sdk.McpServer{}})
	refused(err, -32602, "Invalid params: cwd must be an absolute path: relative/dir")
	_, err = c.prompt(id, "fail broken tool")
	refused(err, -32603, "Internal error: turn failed: broken tool")
	c.close(t)
}

// A model call that streams part of its reply and then breaks is retried;
// the client gets the committed reply once, as the original's bridge
// sends only committed assistant messages. It got the broken call's
// streamed "Hel" and then the retry's "Hello": "HelHello".
func TestACPSendsTheCommittedReplyNotARetriedCallsChunks(t *testing.T) {
	srv := llmtest.NewServer(
		func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n")
			http.NewResponseController(w).Flush()
			panic(http.ErrAbortHandler) // the connection breaks mid-stream
		},
		llmtest.Stream(llmtest.Say("Hel", "lo")),
	)
	defer srv.Close()
	c, id := startModelACP(t, srv.URL)
	resp, err := c.prompt(id, "say Hello")
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonEndTurn, resp.StopReason)
	require.Equal(t, []string{`{"content":{"text":"Hello","type":"text"},"sessionUpdate":"agent_message_chunk"}`}, c.taken(t))
	c.close(t)
}

// How a turn ended maps to the prompt's answer as the original's codec
// maps it: a turn the runtime disposed (serve's SIGINT/SIGTERM with a
// prompt in flight) or interrupted is cancelled, a failed one is an
// Internal error naming its message, and any other ending is end_turn.
// A disposed turn answered "Internal error: turn failed: " with no
// message.
func TestACPPromptAnswersADisposedTurnCancelled(t *testing.T) {
	for reason, want := range map[string]sdk.StopReason{
		"completed": sdk.StopReasonEndTurn, "aborted": sdk.StopReasonCancelled, "disposed": sdk.StopReasonCancelled,
		"interrupted": sdk.StopReasonCancelled, "max-tokens": sdk.StopReasonMaxTokens, "refusal": sdk.StopReasonRefusal,
		"blocked": sdk.StopReasonEndTurn,
	} {
		resp, err := promptResponse(event.TurnEnd{Turn: 1, Reason: reason})
		require.NoError(t, err, reason)
		require.Equal(t, want, resp.StopReason, reason)
	}
	_, err := promptResponse(event.TurnEnd{Turn: 1, Reason: "error", Message: "boom"})
	require.Equal(t, &sdk.RequestError{Code: -32603, Message: "Internal error: turn failed: boom"}, err)
}

// session/set_mode is not served: the agent advertises no modes, and the
// original's bridge implements no setSessionMode, so its SDK answers
// Method not found. It answered success, telling the client a mode was
// set.
func TestACPRefusesSetMode(t *testing.T) {
	c := startACP(t, "--store", t.TempDir())
	id := c.newSession(t, t.TempDir())
	_, err := c.conn.SetSessionMode(bgCtx, sdk.SetSessionModeRequest{SessionId: id, ModeId: "plan"})
	var refused *sdk.RequestError
	require.ErrorAs(t, err, &refused)
	require.Equal(t, -32601, refused.Code)
	c.close(t)
}

// A session/cancel sent right after its session/prompt ends that prompt:
// it answers cancelled and its turn, if one started, is aborted, as the
// original's bridge settles a prompt cancelled however far its admission
// got. The SDK runs requests and notifications on different goroutines,
// so the cancel could reach the agent before the prompt did, cancel
// nothing, and leave the prompt's "sleep 1h" running and unanswered.
func TestACPCancelSentRightAfterAPromptEndsIt(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	exited := make(chan int, 1)
	go func() {
		var stderr strings.Builder
		exited <- acpCommand(context.Background(), []string{"--store", t.TempDir()}, inR, outW, &stderr)
		_ = outW.Close()
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		scanner := bufio.NewScanner(outR)
		for scanner.Scan() {
			lines <- scanner.Text()
		}
	}()
	answer := func(id int) map[string]any {
		t.Helper()
		deadline := time.After(time.Minute)
		for {
			select {
			case line, ok := <-lines:
				require.True(t, ok, "the agent's output ended before the answer to request %d", id)
				var msg map[string]any
				require.NoError(t, json.Unmarshal([]byte(line), &msg))
				if msg["id"] == float64(id) {
					return msg
				}
			case <-deadline:
				t.Fatalf("waited a minute for the answer to request %d", id)
			}
		}
	}
	write := func(text string) {
		t.Helper()
		_, err := io.WriteString(inW, text)
		require.NoError(t, err)
	}
	write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n")
	answer(1)
	write(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":` + jsonString(t.TempDir()) + `,"mcpServers":[]}}` + "\n")
	id := answer(2)["result"].(map[string]any)["sessionId"].(string)
	for i := range 20 {
		request := 10 + i
		write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"sleep 1h"}]}}`+"\n", request, id) +
			fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`+"\n", id))
		require.Equal(t, map[string]any{"stopReason": "cancelled"}, answer(request)["result"], "prompt %d", i)
	}
	require.NoError(t, inW.Close())
	for range lines {
	}
	require.Equal(t, 0, <-exited)
}

// promptWatcher counts each session/prompt request as its line ends,
// however the reads split it, and passes every byte on unchanged.
func TestPromptWatcherCountsPromptsAsTheirLinesEnd(t *testing.T) {
	wire := `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}` + "\n" +
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}` + "\n" +
		`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"not-a-request","prompt":[]}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s2","prompt":[]}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s3","prompt":[{"type":"text","text":"unfinished"}]}}`
	var seen []string
	w := &promptWatcher{r: iotest.OneByteReader(strings.NewReader(wire)), read: func(id string) { seen = append(seen, id) }}
	passed, err := io.ReadAll(w)
	require.NoError(t, err)
	require.Equal(t, wire, string(passed))
	require.Equal(t, []string{"s1", "s2"}, seen, "requests only, and only once their line ended")
}

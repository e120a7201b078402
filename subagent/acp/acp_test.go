package acp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/dsh-actors/dsh-actors/subagent"
	"github.com/dsh-actors/dsh-actors/subagent/acp"
)

// The programs the tests start: this module's dsh-actors (its acp command),
// the ACP SDK's own example agent and example client, built once for the
// package.
var dshActors, exampleAgent, exampleClient string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "acp-agents-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dshActors, exampleAgent = filepath.Join(dir, "dsh-actors"), filepath.Join(dir, "example-agent")
	exampleClient = filepath.Join(dir, "example-client")
	err = errors.Join(build(dshActors, "github.com/dsh-actors/dsh-actors/cmd/dsh-actors"),
		build(exampleAgent, "github.com/coder/acp-go-sdk/example/agent"),
		build(exampleClient, "github.com/coder/acp-go-sdk/example/client"))
	code := 1
	if err == nil {
		code = m.Run()
	} else {
		fmt.Fprintln(os.Stderr, err)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// build builds the main package pkg into out.
func build(out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, stderr.String())
	}
	return nil
}

var bg = context.Background()

// clean fails t, after the test, when a child process of this one or a
// goroutine is left.
// openService opens an actor runtime over a JSONL store in a temporary
// folder with its subagent service, closed at the test's end.
func openService(t *testing.T) (*actors.Runtime, *subagent.Service) {
	t.Helper()
	rt, err := actors.New(actors.Options{Root: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close(bg)) })
	svc, err := subagent.New(rt, query.New(rt.Sessions()))
	require.NoError(t, err)
	return rt, svc
}

func clean(t *testing.T) {
	t.Cleanup(func() {
		require.Empty(t, childProcesses(t), "no agent process is left")
		goleak.VerifyNone(t)
	})
}

// childProcesses are the pids of this process's children, from /proc.
func childProcesses(t *testing.T) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	require.NoError(t, err)
	var children []int
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after
		// its closing parenthesis.
		fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) {
			pid, _ := strconv.Atoi(strings.Fields(string(data))[0])
			children = append(children, pid)
		}
	}
	return children
}

// dshAgent is the provider over `dsh-actors acp` on a store of its own,
// which it returns.
func dshAgent(t *testing.T, cfg acp.Config) (subagent.Provider, string) {
	t.Helper()
	store := t.TempDir()
	cfg.Command, cfg.Args, cfg.Dir = dshActors, []string{"acp", "--store", store}, t.TempDir()
	p, err := acp.New(cfg)
	require.NoError(t, err)
	return p, store
}

func TestAOneShotRunAgainstDshActorsACPIsRemote(t *testing.T) {
	clean(t)
	rt, svc := openService(t)
	p, _ := dshAgent(t, acp.Config{})
	_, err := svc.RegisterProvider(p)
	require.NoError(t, err)
	starts := make(chan *subagent.StartEvent, 1)
	svc.Subscribe(func(ev subagent.Event) {
		if s, ok := ev.(*subagent.StartEvent); ok {
			starts <- s
		}
	})
	parentAgent, err := rt.StartAgent(bg, parent.CreateSpec{Header: session.Header{ID: "parent"}})
	require.NoError(t, err)

	run, err := svc.Start(bg, acp.Name, subagent.StartRequest{Prompt: event.Text("reply hello from dsh"), Parent: parentAgent})
	require.NoError(t, err)
	require.Nil(t, run.LocalAgent(), "remote")
	require.NotEmpty(t, run.ID())
	res, err := run.Result(bg)
	require.NoError(t, err)
	require.Equal(t, subagent.Result{Output: event.Text("hello from dsh"), StopReason: agent.Completed}, res)
	require.NoError(t, run.Dispose(bg))
	require.NoError(t, run.Dispose(bg), "idempotent")

	start := <-starts
	require.False(t, start.Local)
	require.Equal(t, run.ID(), start.ID, "the lifecycle id is minted here")
	require.Equal(t, "parent", start.ParentID)
	children, err := svc.ListChildren(bg, "parent")
	require.NoError(t, err)
	require.Empty(t, children, "nothing of an ACP run reaches the catalog")
}

func TestAChildLevelFailureOfTheAgentIsTheStopReason(t *testing.T) {
	clean(t)
	p, _ := dshAgent(t, acp.Config{})
	for prompt, want := range map[string]agent.StopReason{"refuse no": agent.Refusal, "fail broken": agent.Error, "max-tokens": agent.MaxTokens} {
		run, err := p.Start(bg, subagent.StartRequest{Prompt: event.Text(prompt)})
		require.NoError(t, err)
		res, err := run.Result(bg)
		require.NoError(t, err, prompt)
		require.Equal(t, want, res.StopReason, prompt)
		require.NoError(t, run.Dispose(bg))
	}
}

// Cancelling the run's ctx mid-stream sends session/cancel: the agent ends
// its turn, and the run settles aborted with the text streamed before.
func TestCancelMidStreamSettlesAbortedWithWhatStreamed(t *testing.T) {
	clean(t)
	p, store := dshAgent(t, acp.Config{})
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	run, err := p.Start(ctx, subagent.StartRequest{Prompt: event.Text("reply first\nsleep 1h")})
	require.NoError(t, err)
	waitForLogged(t, store, `"first"`)
	cancel()
	res, err := run.Result(bg)
	require.NoError(t, err)
	require.Equal(t, subagent.Result{Output: event.Text("first"), StopReason: agent.Aborted}, res)
	require.NoError(t, run.Dispose(bg))
}

// waitForLogged waits until a session log under store holds text.
func waitForLogged(t *testing.T, store, text string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		logs, _ := filepath.Glob(filepath.Join(store, "*", "*", "session.jsonl*"))
		for _, log := range logs {
			if strings.Contains(loggedText(log), text) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("waited a minute for %s in a session log under %s", text, store)
}

// The agent process dying mid-turn settles the run with stop reason error;
// dispose still reaps it.
func TestTheAgentProcessDyingSettlesTheRunAsAnError(t *testing.T) {
	clean(t)
	p, store := dshAgent(t, acp.Config{})
	run, err := p.Start(bg, subagent.StartRequest{Prompt: event.Text("reply working\nsleep 1h")})
	require.NoError(t, err)
	waitForLogged(t, store, `"working"`)
	children := childProcesses(t)
	require.Len(t, children, 1, "one agent process")
	require.NoError(t, syscall.Kill(children[0], syscall.SIGKILL))
	res, err := run.Result(bg)
	require.NoError(t, err, "a broken agent is a child-level failure")
	require.Equal(t, agent.Error, res.StopReason)
	require.NoError(t, run.Dispose(bg))
}

func TestAnAgentThatExitsBeforeItsSessionFailsStart(t *testing.T) {
	clean(t)
	p, err := acp.New(acp.Config{Command: "sh", Args: []string{"-c", "exit 3"}, Dir: t.TempDir()})
	require.NoError(t, err)
	_, err = p.Start(bg, subagent.StartRequest{Prompt: event.Text("hi")})
	require.ErrorContains(t, err, "subagent/acp: sh initialize")

	p, err = acp.New(acp.Config{Command: filepath.Join(t.TempDir(), "missing"), Dir: t.TempDir()})
	require.NoError(t, err)
	_, err = p.Start(bg, subagent.StartRequest{Prompt: event.Text("hi")})
	require.ErrorContains(t, err, "subagent/acp: start ")
}

func TestStartCancelledBeforeTheSessionLeavesNothing(t *testing.T) {
	clean(t)
	p, err := acp.New(acp.Config{Command: "sleep", Args: []string{"3600"}, Grace: time.Millisecond, Dir: t.TempDir()})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(bg)
	go func() {
		defer cancel()
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if len(childProcesses(t)) > 0 {
				return
			}
		}
	}()
	_, err = p.Start(ctx, subagent.StartRequest{Prompt: event.Text("hi")})
	require.ErrorContains(t, err, "cancelled before the agent's session started")
	ctx, cancel = context.WithCancel(bg)
	cancel()
	_, err = p.Start(ctx, subagent.StartRequest{Prompt: event.Text("hi")})
	require.ErrorContains(t, err, "cancelled before the agent started")
}

func TestConfigIsValidated(t *testing.T) {
	for _, c := range []struct {
		cfg  acp.Config
		want string
	}{
		{acp.Config{}, "Config.Command must name the agent's executable"},
		{acp.Config{Command: "x", Permission: "maybe"}, `Config.Permission must be "deny" or "allow", got "maybe"`},
		{acp.Config{Command: "x", Grace: -1}, "Config.Grace must not be negative"},
		{acp.Config{Command: "x", Dir: "/nonexistent/dir"}, `Config.Dir "/nonexistent/dir" is not an accessible directory`},
	} {
		_, err := acp.New(c.cfg)
		require.ErrorContains(t, err, c.want)
	}
	p, err := acp.New(acp.Config{Command: "x"})
	require.NoError(t, err)
	require.Equal(t, acp.Name, p.Name())
	require.Equal(t, subagent.Capabilities{}, p.Capabilities())
	require.False(t, p.InheritsParentContext())
}

// The SDK's example agent asks permission for an edit: Deny (the default)
// answers cancelled, whatever options the agent offered, and the agent
// ends its turn without the edit; Allow selects its allow option. Each run
// streams the agent's text.
func TestTheExampleAgentsPermissionRequestIsAnsweredByPolicy(t *testing.T) {
	clean(t)
	for _, c := range []struct {
		policy    acp.Permission
		want, not string
	}{
		{"", "I need to make some changes to improve it.", "change"},
		{acp.Allow, "I've successfully updated the configuration.", "I understand you prefer not"},
	} {
		p, err := acp.New(acp.Config{Command: exampleAgent, Dir: t.TempDir(), Permission: c.policy})
		require.NoError(t, err)
		run, err := p.Start(bg, subagent.StartRequest{Prompt: event.Text("edit the config")})
		require.NoError(t, err)
		res, err := run.Result(bg)
		require.NoError(t, err)
		require.Equal(t, agent.Completed, res.StopReason)
		require.Contains(t, event.TextOf(res.Output), "ACP Go Example Agent")
		require.Contains(t, event.TextOf(res.Output), c.want)
		if c.policy == "" {
			require.True(t, strings.HasSuffix(event.TextOf(res.Output), c.want), "nothing after the refused edit: %q", event.TextOf(res.Output))
		} else {
			require.NotContains(t, event.TextOf(res.Output), c.not)
		}
		require.NoError(t, run.Dispose(bg))
	}
}

// Cancelling a run of the example agent mid-turn ends it aborted; so does
// disposing a run whose result is still pending.
func TestTheExampleAgentIsCancelledAndDisposedMidTurn(t *testing.T) {
	clean(t)
	p, err := acp.New(acp.Config{Command: exampleAgent, Dir: t.TempDir()})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(bg)
	run, err := p.Start(ctx, subagent.StartRequest{Prompt: event.Text("work")})
	require.NoError(t, err)
	cancel()
	res, err := run.Result(bg)
	require.NoError(t, err)
	require.Equal(t, agent.Aborted, res.StopReason)
	require.NoError(t, run.Dispose(bg))

	run, err = p.Start(bg, subagent.StartRequest{Prompt: event.Text("work")})
	require.NoError(t, err)
	require.NoError(t, run.Dispose(bg))
	res, err = run.Result(bg)
	require.NoError(t, err)
	require.Equal(t, agent.Aborted, res.StopReason)
}

// The SDK's example client, which nobody here wrote, drives `dsh-actors
// acp`: it initializes, opens a session and sends "Hello, agent!", which
// the keyless scripted agent answers with the same text.
func TestDshActorsACPAnswersTheSDKsExampleClient(t *testing.T) {
	clean(t)
	client := exec.Command(exampleClient, dshActors, "acp", "--store", t.TempDir())
	client.Dir = t.TempDir()
	var stderr bytes.Buffer
	client.Stderr = &stderr
	out, err := client.Output()
	require.NoError(t, err, stderr.String())
	text := string(out)
	require.Contains(t, text, "Connected to agent (protocol v1)")
	require.Regexp(t, `Created session: [0-9a-f-]{36}\n`, text)
	require.Contains(t, strings.Split(text, "\n"), " Hello, agent!", "the agent's answer, after the space the client prints")
	require.Contains(t, text, "Agent completed")
}

// storedCwd is the cwd in the header of the one session log under store.
func storedCwd(t *testing.T, store string) string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(store, "*", "*", "session.jsonl*"))
	require.NoError(t, err)
	require.Len(t, logs, 1, "one session under %s", store)
	data := loggedText(logs[0])
	var header struct{ Cwd string }
	require.NoError(t, json.Unmarshal([]byte(data[:strings.IndexByte(data, '\n')]), &header))
	return header.Cwd
}

// Without Config.Dir the agent works in the parent session's cwd, which
// must be an accessible directory (session headers hold absolute ones); with neither, Start fails
// rather than fall back to this process's directory. A relative Dir is
// taken from this process's directory when the provider is made.
func TestTheAgentsWorkingDirectory(t *testing.T) {
	clean(t)
	rt, _ := openService(t)
	withCwd := func(id, cwd string) *parent.Handle {
		h, err := rt.StartAgent(bg, parent.CreateSpec{Header: session.Header{ID: id, Cwd: cwd}})
		require.NoError(t, err)
		return h
	}
	store := t.TempDir()
	p, err := acp.New(acp.Config{Command: dshActors, Args: []string{"acp", "--store", store}})
	require.NoError(t, err)
	for _, c := range []struct {
		parent *parent.Handle
		want   string
	}{
		{nil, "subagent/acp: no working directory for the child — configure Config.Dir or delegate from a parent session that has one"},
		{withCwd("no-cwd", ""), "subagent/acp: no working directory for the child"},
		{withCwd("missing", "/nonexistent/dir"), "subagent/acp: parent session cwd is not an accessible directory: /nonexistent/dir"},
	} {
		_, err := p.Start(bg, subagent.StartRequest{Prompt: event.Text("hi"), Parent: c.parent})
		require.ErrorContains(t, err, c.want)
	}
	require.Empty(t, childProcesses(t), "nothing started")

	cwd := t.TempDir()
	run, err := p.Start(bg, subagent.StartRequest{Prompt: event.Text("reply here"), Parent: withCwd("with-cwd", cwd)})
	require.NoError(t, err)
	_, err = run.Result(bg)
	require.NoError(t, err)
	require.NoError(t, run.Dispose(bg))
	require.Equal(t, cwd, storedCwd(t, store))

	launch, store := t.TempDir(), t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(launch, "sub"), 0o755))
	t.Chdir(launch)
	p, err = acp.New(acp.Config{Command: dshActors, Args: []string{"acp", "--store", store}, Dir: "sub"})
	require.NoError(t, err)
	t.Chdir(t.TempDir()) // later changes of this process's directory do not matter
	run, err = p.Start(bg, subagent.StartRequest{Prompt: event.Text("reply here")})
	require.NoError(t, err)
	_, err = run.Result(bg)
	require.NoError(t, err)
	require.NoError(t, run.Dispose(bg))
	require.Equal(t, filepath.Join(launch, "sub"), storedCwd(t, store))
}

// The SDK's example agent dying mid-turn settles the run with stop reason
// error and the text it streamed; dispose still reaps it.
func TestTheExampleAgentDyingMidTurnSettlesAsAnError(t *testing.T) {
	clean(t)
	p, err := acp.New(acp.Config{Command: exampleAgent, Dir: t.TempDir()})
	require.NoError(t, err)
	run, err := p.Start(bg, subagent.StartRequest{Prompt: event.Text("work")})
	require.NoError(t, err)
	children := childProcesses(t)
	require.Len(t, children, 1, "one agent process")
	require.NoError(t, syscall.Kill(children[0], syscall.SIGKILL))
	res, err := run.Result(bg)
	require.NoError(t, err, "a dead agent is a child-level failure")
	require.Equal(t, agent.Error, res.StopReason)
	require.NotContains(t, event.TextOf(res.Output), "improve it", "it died before the end of its turn")
	require.NoError(t, run.Dispose(bg))
}

// The agent gets this process's environment without credential-shaped
// names (KEY, PASSWORD, SECRET, TOKEN, any case) or DSH_ names, then
// Config.Env, which may pass either on deliberately.
func TestTheAgentsEnvironmentIsScrubbed(t *testing.T) {
	clean(t)
	t.Setenv("PLAIN_SETTING", "kept")
	t.Setenv("DEEPSEEK_API_KEY", "ambient")
	t.Setenv("my_password", "ambient")
	t.Setenv("DSH_IDENTITY", "ambient")
	dir := t.TempDir()
	p, err := acp.New(acp.Config{Command: "sh", Args: []string{"-c", "env > env.txt; exit 3"}, Dir: dir,
		Env: []string{"CHILD_TOKEN=given", "DSH_MODE=given"}})
	require.NoError(t, err)
	_, err = p.Start(bg, subagent.StartRequest{Prompt: event.Text("hi")})
	require.ErrorContains(t, err, "initialize")
	data, err := os.ReadFile(filepath.Join(dir, "env.txt"))
	require.NoError(t, err)
	env := strings.Split(string(data), "\n")
	require.Subset(t, env, []string{"PLAIN_SETTING=kept", "CHILD_TOKEN=given", "DSH_MODE=given"})
	for _, name := range []string{"DEEPSEEK_API_KEY=", "my_password=", "DSH_IDENTITY="} {
		for _, line := range env {
			require.False(t, strings.HasPrefix(line, name), "%s is not passed on", name)
		}
	}
}

// An agent that does not exit when its stdin closes is asked to stop with
// SIGTERM after the grace, before it is killed.
func TestAnAgentIgnoringItsStdinIsTerminatedBeforeKilled(t *testing.T) {
	clean(t)
	dir := t.TempDir()
	p, err := acp.New(acp.Config{Command: "sh", Dir: dir, Grace: time.Second,
		Args: []string{"-c", `trap 'echo terminated > term.txt; exit 0' TERM; : > ready; sleep 3600 & wait`}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(bg)
	go func() {
		defer cancel()
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
				return
			}
		}
	}()
	_, err = p.Start(ctx, subagent.StartRequest{Prompt: event.Text("hi")})
	require.ErrorContains(t, err, "cancelled before the agent's session started")
	data, err := os.ReadFile(filepath.Join(dir, "term.txt"))
	require.NoError(t, err, "the agent got SIGTERM")
	require.Equal(t, "terminated\n", string(data))
}

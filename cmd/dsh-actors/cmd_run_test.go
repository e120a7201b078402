package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/llm"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
)

// runOutput splits run's stdout into its session line's id, the lines of
// its children's replies (in the order they ended) and the rest, the
// root's turn.
func runOutput(t *testing.T, stdout string) (session string, children []string, rest string) {
	t.Helper()
	first, rest, _ := strings.Cut(stdout, "\n")
	m := regexp.MustCompile(`^\[session ([0-9a-f-]{36})\]$`).FindStringSubmatch(first)
	require.NotNil(t, m, "the first line names the session: %q", stdout)
	var kept []string
	for _, line := range strings.SplitAfter(rest, "\n") {
		if strings.HasPrefix(line, "[child ") {
			children = append(children, strings.TrimSuffix(line, "\n"))
		} else {
			kept = append(kept, line)
		}
	}
	return m[1], children, strings.Join(kept, "")
}

// run prints the new session's id first and each child's reply as its
// turn ends, beside the root's turn.
func TestRunPrintsTheScriptedReply(t *testing.T) {
	store := t.TempDir()
	code, stdout, stderr := run(t, "run", "--store", store, "spawn kid: reply hi\nreply parent done")
	require.Equal(t, 0, code, stderr)
	id, children, rest := runOutput(t, stdout)
	require.Regexp(t, `^spawned kid [0-9a-f-]{36}\nparent done\n$`, rest)
	child := strings.TrimPrefix(strings.Split(rest, "\n")[0], "spawned kid ")
	require.Equal(t, []string{"[child " + child + " completed] hi"}, children)
	code, listed, stderr := run(t, "list", "--json", "--store", store, id)
	require.Zero(t, code, stderr)
	require.Contains(t, listed, child, "the printed id is the session's")
	code, _, stderr = run(t, "run", "--store", store, "fail boom")
	require.Equal(t, 1, code)
	require.Equal(t, "dsh-actors run: the turn ended error: boom\n", stderr)
	code, _, stderr = run(t, "run", "--store", store)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "run takes exactly one PROMPT argument")
}

// A child's reply cut to its first 200 bytes is cut where a character
// starts: the line run prints stays UTF-8.
func TestRunCutsAChildsLongReplyBetweenCharacters(t *testing.T) {
	store := t.TempDir()
	reply := "a" + strings.Repeat("é", 150) // 301 bytes; byte 199 starts an é
	code, stdout, stderr := run(t, "run", "--store", store, "spawn kid: reply "+reply)
	require.Equal(t, 0, code, stderr)
	_, children, rest := runOutput(t, stdout)
	child := strings.TrimPrefix(strings.Split(rest, "\n")[0], "spawned kid ")
	require.Equal(t, []string{"[child " + child + " completed] a" + strings.Repeat("é", 99) + " … (102 more bytes)"}, children)
}

// A child whose turn failed is printed with why, as send prints it, not
// as a bare "error".
func TestRunPrintsWhyAChildFailed(t *testing.T) {
	store := t.TempDir()
	code, stdout, stderr := run(t, "run", "--store", store, "spawn kid: fail inner trouble")
	require.Equal(t, 0, code, stderr)
	_, children, rest := runOutput(t, stdout)
	child := strings.TrimPrefix(strings.Split(rest, "\n")[0], "spawned kid ")
	require.Equal(t, []string{"[child " + child + " error] (failed: inner trouble)"}, children)
}

func TestRunWithAModelNeedsItsKey(t *testing.T) {
	t.Setenv(llm.EnvAPIKey, "")
	code, _, stderr := run(t, "run", "--model", "deepseek-v4-flash", "--store", t.TempDir(), "hi")
	require.Equal(t, 1, code)
	require.Equal(t, "dsh-actors run: MISSING_CREDENTIAL: no DeepSeek API key: set DEEPSEEK_API_KEY\n", stderr)
	code, _, stderr = run(t, "serve", "--model", "deepseek-v4-flash", "--store", t.TempDir(), "--addr", "127.0.0.1:0")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "DEEPSEEK_API_KEY")
}

func TestRunStreamsAModelTurnAndWaitsForItsChildren(t *testing.T) {
	srv := llmtest.NewServer(
		llmtest.Stream(llmtest.CallTools(llmtest.Call{ID: "c1", Name: "subagent",
			Args: []string{`{"description": "kid", "prompt": "Say CHILD.", "run_in_background": true}`}})),
		llmtest.Stream(llmtest.Say("DO", "NE")),
	)
	defer srv.Close()
	srv.Route(func(r llmtest.Received) bool {
		return bytes.Contains(r.Body, []byte(`{"role":"user","content":"Say CHILD."}`))
	},
		llmtest.Stream(llmtest.Say("CHILD")))
	t.Setenv(llm.EnvAPIKey, "k")
	t.Setenv(llm.EnvBaseURL, srv.URL)
	store := t.TempDir()
	code, stdout, stderr := run(t, "run", "--model", "deepseek-v4-flash", "--store", store, "delegate, then say DONE")
	require.Equal(t, 0, code, stderr)
	_, children, rest := runOutput(t, stdout)
	require.Len(t, children, 1)
	require.Regexp(t, `^\[child [0-9a-f-]{36} completed\] CHILD$`, children[0])
	lines := strings.Split(rest, "\n")
	require.Equal(t, `[tool subagent {"description": "kid", "prompt": "Say CHILD.", "run_in_background": true}]`, lines[0])
	require.Regexp(t, `^\[result\] started subagent [0-9a-f-]{36}$`, lines[1])
	require.Equal(t, []string{"DONE", ""}, lines[2:])
	require.Len(t, srv.Received(), 3, "the child's turn ran before run returned")
	logs, err := filepath.Glob(filepath.Join(store, "*", "*", "session.jsonl.zstd"))
	require.NoError(t, err)
	require.Len(t, logs, 2, "a new store's logs are Zstandard")
	for _, path := range logs {
		require.Contains(t, logText(t, path), `"reason":{"kind":"completed"}`)
	}

	srv.Push(llmtest.Status(401, `{"error":{"message":"Authentication Fails"}}`))
	code, _, stderr = run(t, "run", "--model", "deepseek-v4-flash", "--store", store, "hi")
	require.Equal(t, 1, code)
	lastLine := stderr[strings.LastIndex(strings.TrimSuffix(stderr, "\n"), "\n")+1:]
	require.Equal(t, "dsh-actors run: the turn ended error: Authentication Fails: HTTP 401 from POST "+srv.URL+"/chat/completions (AUTH)\n", lastLine,
		"after the startup line")
}

// TestRunExitsZeroWhenARetryChainSucceeds: a failed call the policy
// retries prints one retry line, and the retry turn's answer decides the
// exit code.
func TestRunExitsZeroWhenARetryChainSucceeds(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Stream(llmtest.Response{Usage: &llmtest.Usage{}}), llmtest.Stream(llmtest.Say("ok")))
	defer srv.Close()
	t.Setenv(llm.EnvAPIKey, "k")
	t.Setenv(llm.EnvBaseURL, srv.URL)
	code, stdout, stderr := run(t, "run", "--model", "deepseek-v4-flash", "--store", t.TempDir(), "hi")
	require.Equal(t, 0, code, stderr)
	_, _, rest := runOutput(t, stdout)
	require.Regexp(t, `^\[retry 1 of 2 in [0-9]+ ms: model returned a completed response with no content \(EMPTY_RESPONSE\)\]\nok\n$`, rest)
	require.Len(t, srv.Received(), 2)
}

// A session the store cannot create (here its project folder's place is
// taken by a file) fails run before any "[session ID]" line: stdout names
// no session that was never stored.
func TestRunPrintsNoSessionItCouldNotCreate(t *testing.T) {
	root := t.TempDir()
	cwd, err := os.Getwd()
	require.NoError(t, err)
	project, err := logpath.ProjectDir(root, cwd)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(project, []byte("in the way\n"), 0o600))
	code, stdout, stderr := run(t, "run", "--store", root, "reply hi")
	require.Equal(t, 1, code, stderr)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "dsh-actors run: AGENT_START_FAILED: ")
	require.Contains(t, stderr, project)
}

package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// buildServe builds the dsh-actors binary into a temporary folder.
func buildServe(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "dsh-actors")
	cmd := exec.Command(goBin, "build", "-o", bin, "./cmd/dsh-actors")
	cmd.Dir = moduleRoot(t)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// server is one running `dsh-actors serve`.
type server struct {
	cmd    *exec.Cmd
	url    string
	lines  chan string // stdout lines after the URL line
	stderr *bytes.Buffer
	exited chan struct{}
}

// startServe runs `bin serve --store store --addr 127.0.0.1:0` and waits
// for the URL it prints.
func startServe(t *testing.T, bin, store string) *server {
	t.Helper()
	s := &server{cmd: exec.Command(bin, "serve", "--store", store, "--addr", "127.0.0.1:0"),
		lines: make(chan string, 16), stderr: &bytes.Buffer{}, exited: make(chan struct{})}
	s.cmd.Stderr = s.stderr
	stdout, err := s.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, s.cmd.Start())
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		testkit.Receive(t, s.exited, "serve to exit once killed")
	})
	reader := bufio.NewScanner(stdout)
	require.True(t, reader.Scan(), "serve printed nothing; stderr: %s", s.stderr)
	first := reader.Text()
	_, after, ok := strings.Cut(first, "http://")
	require.True(t, ok, "first line has the URL: %q", first)
	s.url = "http://" + strings.TrimSuffix(strings.Fields(after)[0], "/")
	go func() {
		for reader.Scan() {
			s.lines <- reader.Text()
		}
		close(s.lines)
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	return s
}

// wait returns the exit code once the process ended.
func (s *server) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-s.exited:
		return s.cmd.ProcessState.ExitCode()
	case <-time.After(within):
		t.Fatalf("serve did not exit within %s; stderr: %s", within, s.stderr)
		return -1
	}
}

// nextLine waits for the next stdout line.
func (s *server) nextLine(t *testing.T) string {
	t.Helper()
	select {
	case line := <-s.lines:
		return line
	case <-time.After(30 * time.Second):
		t.Fatal("serve printed no further line")
		return ""
	}
}

// rpcResult is a decoded server-response result.
type rpcResult struct {
	OK    bool            `json:"ok"`
	Value json.RawMessage `json:"value"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call posts one client-request to base and returns its result.
func call(ctx context.Context, client *http.Client, base, method string, payload any) (rpcResult, error) {
	rpcID := uuid.NewString()
	body, err := json.Marshal(map[string]any{"type": "client-request", "rpcId": rpcID, "method": method, "payload": payload})
	if err != nil {
		return rpcResult{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/"+method, bytes.NewReader(body))
	if err != nil {
		return rpcResult{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return rpcResult{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		text, _ := io.ReadAll(resp.Body)
		return rpcResult{}, fmt.Errorf("%s: HTTP %d: %s", method, resp.StatusCode, text)
	}
	var envelope struct {
		RPCID  string    `json:"rpcId"`
		Result rpcResult `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&envelope); err != nil {
		return rpcResult{}, err
	}
	if envelope.RPCID != rpcID {
		return rpcResult{}, fmt.Errorf("%s: rpcId echo %q != %q", method, envelope.RPCID, rpcID)
	}
	return envelope.Result, nil
}

// mustCall is call that requires an ok result and decodes its value.
func mustCall(t *testing.T, base, method string, payload, value any) {
	t.Helper()
	result, err := call(testkit.Context(t), http.DefaultClient, base, method, payload)
	require.NoError(t, err, "the %s call", method)
	require.True(t, result.OK, "%s: %+v", method, result.Error)
	if value != nil {
		require.NoError(t, json.Unmarshal(result.Value, value))
	}
}

func text(s string) []map[string]string { return []map[string]string{{"type": "text", "text": s}} }

// catalog is a subagent.list value.
type catalog struct {
	Entries []struct {
		Kind, ID, Label, Activity, Reason string
	} `json:"entries"`
	ParentAvailable bool `json:"parentAvailable"`
}

// awaitCatalog polls subagent.list until done accepts it.
func awaitCatalog(t *testing.T, base, parentID string, done func(catalog) bool) catalog {
	t.Helper()
	var c catalog
	require.Eventually(t, func() bool {
		mustCall(t, base, "subagent.list", map[string]any{"parentSessionId": parentID}, &c)
		return done(c)
	}, 60*time.Second, 20*time.Millisecond)
	return c
}

// awaitTurnStart polls subagent.history until the child's log holds a
// turn/start.
func awaitTurnStart(t *testing.T, base, parentID, child string) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, e := range historyEvents(t, base, parentID, child) {
			if e.Type == "turn/start" {
				return true
			}
		}
		return false
	}, 60*time.Second, 20*time.Millisecond)
}

func TestServeRejectsBadFlagsWithUsage(t *testing.T) {
	bin := buildServe(t)
	for _, args := range [][]string{{"serve", "--nope"}, {"serve", "extra"}, {"serve", "--addr"}} {
		var stderr bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "%v", args)
		require.Equal(t, 2, exit.ExitCode(), "%v", args)
		require.Contains(t, stderr.String(), "usage: dsh-actors serve", "%v", args)
	}
}

func TestServeReportsAPortInUse(t *testing.T) {
	bin := buildServe(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "serve", "--store", t.TempDir(), "--addr", taken.Addr().String())
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, 1, exit.ExitCode())
	require.Contains(t, stderr.String(), "cannot listen on "+taken.Addr().String())
	require.Contains(t, stderr.String(), "address already in use")
}

func TestServeDrainsChildFirstAndFlushesOnSIGINT(t *testing.T) {
	bin := buildServe(t)
	store := t.TempDir()
	s := startServe(t, bin, store)

	var top struct{ SessionID string }
	mustCall(t, s.url, "session.create", map[string]any{}, &top)
	mustCall(t, s.url, "session.prompt", map[string]any{"sessionId": top.SessionID, "mode": "queue",
		"content": text("spawn sleeper: sleep 1h\nreply spawned")}, nil)
	children := awaitCatalog(t, s.url, top.SessionID, func(c catalog) bool {
		return len(c.Entries) == 1 && c.Entries[0].Activity == "running"
	})
	// "running" can be reported before the child claimed its prompt, and a
	// drain discards a prompt no turn has claimed yet; the sleeping turn
	// must have started for its cancellation to be what is flushed.
	awaitTurnStart(t, s.url, top.SessionID, children.Entries[0].ID)

	require.NoError(t, s.cmd.Process.Signal(syscall.SIGINT))
	require.Contains(t, s.nextLine(t), "shutting down")
	require.Equal(t, 0, s.wait(t, 60*time.Second), "stderr: %s", s.stderr)

	jsonl, err := session.OpenJSONL(store)
	require.NoError(t, err)
	defer jsonl.Close()
	entries, err := query.ListChildren(testkit.Context(t), query.New(session.NewSessions(jsonl)), top.SessionID)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Equal(t, children.Entries[0].ID, entries[0].ID)
	child, err := jsonl.Inspect(testkit.Context(t), entries[0].ID)
	require.NoError(t, err)
	last := child.Events[len(child.Events)-1]
	require.Equal(t, "turn/end", last.Type, "the sleeping turn was cancelled and its end flushed")
	require.Contains(t, string(last.Data), `"aborted"`)
}

func TestServeSecondSIGINTForcesExit(t *testing.T) {
	bin := buildServe(t)
	s := startServe(t, bin, t.TempDir())

	// A request whose body never completes keeps the graceful shutdown waiting.
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /api/session.list HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
		strings.TrimPrefix(s.url, "http://"))
	require.NoError(t, err)
	mustCall(t, s.url, "session.list", map[string]any{}, nil) // the slow request is in the handler by now

	require.NoError(t, s.cmd.Process.Signal(syscall.SIGINT))
	require.Contains(t, s.nextLine(t), "shutting down")
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGINT))
	require.Equal(t, 1, s.wait(t, 30*time.Second))
	require.Contains(t, s.stderr.String(), "forced exit")
}

// TestServeDescribesItself: serve answers host.describe, the web client's
// readiness call, with its version, its working folder as the default
// cwd, no route for the scripted agent and its attached sessions.
func TestServeDescribesItself(t *testing.T) {
	s := startServe(t, buildServe(t), t.TempDir())
	wd, err := os.Getwd()
	require.NoError(t, err)
	var before, after map[string]any
	mustCall(t, s.url, "host.describe", map[string]any{}, &before)
	require.Equal(t, map[string]any{"version": "0", "cwd": wd, "attachedSessions": 0.0}, before)
	mustCall(t, s.url, "session.create", map[string]any{}, nil)
	mustCall(t, s.url, "host.describe", map[string]any{}, &after)
	require.Equal(t, 1.0, after["attachedSessions"], "after session.create")
}

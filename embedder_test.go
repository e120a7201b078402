package dsh

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/stretchr/testify/require"
)

// An embedder is this test binary run again as a separate OS process that
// embeds the runtime: TestMain sees embedderDSN in its environment and
// serves line commands on stdin (one tab-separated command a line) over a
// runtime opened on that Postgres store, answering "ok[\tVALUE]" or
// "err\tCODE\tMESSAGE" on stdout.
const (
	embedderDSN  = "DSH_TEST_EMBEDDER_DSN"
	embedderNode = "DSH_TEST_EMBEDDER_NODE"
	embedderTTL  = "DSH_TEST_EMBEDDER_TTL"
)

// isEmbedder reports whether this process was started as an embedder.
func isEmbedder() bool { return os.Getenv(embedderDSN) != "" }

// serveEmbedder opens the runtime the environment names and runs the
// commands read from in until in ends; it returns the exit status.
func serveEmbedder(in io.Reader, out io.Writer) int {
	ttl, err := time.ParseDuration(os.Getenv(embedderTTL))
	if err == nil {
		var rt *Runtime
		logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		rt, err = Open(Options{Dir: os.Getenv(embedderDSN), Node: os.Getenv(embedderNode), LeaseTTL: ttl, Logger: logger})
		if err == nil {
			fmt.Fprintln(out, "ready")
			e := &embedded{rt: rt, agents: map[string]*Handle{}}
			lines := bufio.NewScanner(in)
			for lines.Scan() {
				fmt.Fprintln(out, e.do(strings.Split(lines.Text(), "\t")))
			}
			err = rt.Close()
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "embedder:", err)
		return 1
	}
	return 0
}

// embedded is an embedder's runtime and the handles of its live agents.
type embedded struct {
	rt     *Runtime
	agents map[string]*Handle
}

// do runs one command: start ID, resume ID, spawn PARENT LABEL TEXT, send
// PARENT CHILD TEXT.
func (e *embedded) do(cmd []string) string {
	ctx := context.Background()
	var value string
	var err error
	switch {
	case cmd[0] == "start" && len(cmd) == 2:
		e.agents[cmd[1]], err = e.rt.StartAgent(ctx, cmd[1])
	case cmd[0] == "resume" && len(cmd) == 2:
		e.agents[cmd[1]], err = e.rt.ResumeAgent(ctx, cmd[1])
	case cmd[0] == "spawn" && len(cmd) == 4:
		value, err = e.rt.Spawn(ctx, e.agents[cmd[1]], cmd[2], event.Text(cmd[3]))
	case cmd[0] == "send" && len(cmd) == 4:
		value, err = e.rt.Send(ctx, e.agents[cmd[1]], cmd[2], event.Text(cmd[3]))
	default:
		err = fmt.Errorf("embedder: unknown command %q", cmd)
	}
	if err != nil {
		return "err\t" + string(fault.CodeOf(err)) + "\t" + strings.ReplaceAll(err.Error(), "\n", " ")
	}
	return strings.TrimSuffix("ok\t"+value, "\t")
}

// embedder is a running embedder process, seen from the test.
type embedder struct {
	name    string
	cmd     *exec.Cmd
	in      io.WriteCloser
	replies chan string
	stderr  *lockedBuffer
	exited  chan struct{}
}

// embedderReply bounds the wait for one reply of an embedder.
const embedderReply = time.Minute

// startEmbedder runs this test binary as the embedder node on the
// Postgres store dsn with lease TTL ttl and waits until its runtime is
// open; the process is killed at the end of the test.
func startEmbedder(t *testing.T, dsn, node string, ttl time.Duration) *embedder {
	t.Helper()
	e := &embedder{name: node, replies: make(chan string, 1), stderr: &lockedBuffer{}, exited: make(chan struct{})}
	e.cmd = exec.Command(os.Args[0], "-test.run=^$")
	e.cmd.Env = append(os.Environ(), embedderDSN+"="+dsn, embedderNode+"="+node, embedderTTL+"="+ttl.String())
	e.cmd.Stderr = e.stderr
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var err error
	e.in, err = e.cmd.StdinPipe()
	require.NoError(t, err)
	out, err := e.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, e.cmd.Start())
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			e.replies <- lines.Text()
		}
		_ = e.cmd.Wait()
		close(e.exited)
	}()
	t.Cleanup(func() {
		e.kill()
		if t.Failed() {
			t.Logf("embedder %s stderr:\n%s", node, e.stderr)
		}
	})
	require.Equal(t, "ready", e.reply(t), "embedder %s did not open its runtime", node)
	return e
}

// reply is the embedder's next line, within embedderReply.
func (e *embedder) reply(t *testing.T) string {
	t.Helper()
	select {
	case line := <-e.replies:
		return line
	case <-e.exited:
		t.Fatalf("embedder %s exited; stderr: %s", e.name, e.stderr)
	case <-time.After(embedderReply):
		t.Fatalf("embedder %s: no reply within %s; stderr: %s", e.name, embedderReply, e.stderr)
	}
	return ""
}

// call sends one command and returns its value, or its error as an
// *fault.Error carrying the code the embedder reported.
func (e *embedder) call(t *testing.T, args ...string) (string, error) {
	t.Helper()
	_, err := fmt.Fprintln(e.in, strings.Join(args, "\t"))
	require.NoError(t, err, "write to embedder %s", e.name)
	reply := strings.SplitN(e.reply(t), "\t", 3)
	if reply[0] == "err" {
		return "", fault.New(fault.Code(reply[1]), reply[2], nil)
	}
	return strings.Join(reply[1:], ""), nil
}

// must is call that fails the test on an error.
func (e *embedder) must(t *testing.T, args ...string) string {
	t.Helper()
	value, err := e.call(t, args...)
	require.NoError(t, err, "embedder %s: %v", e.name, args)
	return value
}

// kill ends the process with SIGKILL (no release of its leases, no flush)
// and waits for it to exit; killing an exited embedder does nothing.
func (e *embedder) kill() {
	_ = e.cmd.Process.Kill()
	<-e.exited
}

// lockedBuffer is a bytes buffer safe for the process's writer and the
// test's readers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

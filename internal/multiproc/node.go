package multiproc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Build compiles the dsh-actors command, with the race detector, into
// dir and returns the binary's path. moduleRoot is the folder of go.mod.
func Build(ctx context.Context, moduleRoot, dir string) (string, error) {
	bin := filepath.Join(dir, "dsh-actors")
	cmd := exec.CommandContext(ctx, "go", "build", "-race", "-o", bin, "./cmd/dsh-actors")
	cmd.Dir = moduleRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("multiproc: build: %w\n%s", err, out)
	}
	return bin, nil
}

// Node is one running `dsh-actors serve` on the store.
type Node struct {
	Name string
	URL  string // http://127.0.0.1:PORT

	dsn    string // the store's
	cmd    *exec.Cmd
	stderr *lockedBuffer
	exited chan struct{}
	client *http.Client
}

// Start runs bin serve on the Postgres store dsn as node name with lease
// TTL ttl, on a free loopback port, and blocks until it prints the URL it
// serves (or exits first).
func Start(bin, dsn, name string, ttl time.Duration) (*Node, error) {
	n := &Node{Name: name, dsn: dsn, stderr: &lockedBuffer{}, exited: make(chan struct{}),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
	n.cmd = exec.Command(bin, "serve", "--store", dsn, "--node", name, "--lease-ttl", ttl.String(),
		"--addr", "127.0.0.1:0", "--leak-check")
	n.cmd.Stderr = n.stderr
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := n.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := n.cmd.Start(); err != nil {
		return nil, fmt.Errorf("multiproc: start node %s: %w", name, err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		_ = n.cmd.Wait()
		return nil, fmt.Errorf("multiproc: node %s printed nothing; stderr: %s", name, n.stderr)
	}
	_, after, ok := strings.Cut(lines.Text(), "http://")
	if !ok {
		_ = n.cmd.Process.Kill()
		_ = n.cmd.Wait()
		return nil, fmt.Errorf("multiproc: node %s: no URL in %q", name, lines.Text())
	}
	n.URL = "http://" + strings.TrimSuffix(strings.Fields(after)[0], "/")
	go func() {
		for lines.Scan() {
		}
		_ = n.cmd.Wait()
		close(n.exited)
	}()
	return n, nil
}

// Stderr is what the node wrote to stderr so far.
func (n *Node) Stderr() string { return n.stderr.String() }

// Kill sends SIGKILL and waits for the process to end.
func (n *Node) Kill() {
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.exited
	n.client.CloseIdleConnections()
}

// Pause stops the process (SIGSTOP); Resume continues it (SIGCONT).
func (n *Node) Pause() error { return n.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused process (SIGCONT).
func (n *Node) Resume() error { return n.cmd.Process.Signal(syscall.SIGCONT) }

// Stop asks the node to shut down (SIGTERM: the drain, the child-first
// disposal, the leases released, the leak check) and waits at most
// within; it returns the exit status, or an error (the node killed) when
// it did not end in time.
func (n *Node) Stop(within time.Duration) (int, error) {
	n.client.CloseIdleConnections()
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
		return n.cmd.ProcessState.ExitCode(), nil
	case <-time.After(within):
		n.Kill()
		return -1, fmt.Errorf("multiproc: node %s did not stop within %s; stderr: %s", n.Name, within, n.stderr)
	}
}

// Exited reports whether the process has ended.
func (n *Node) Exited() bool {
	select {
	case <-n.exited:
		return true
	default:
		return false
	}
}

// RPCError is a server-response whose result is not ok.
type RPCError struct {
	Method, Code, Message string
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("multiproc: %s: %s: %s", e.Method, e.Code, e.Message)
}

// Call posts one client-request and decodes an ok result's value into
// value (when not nil); a result that is not ok is an *RPCError.
func (n *Node) Call(ctx context.Context, method string, payload, value any) error {
	body, err := json.Marshal(map[string]any{"type": "client-request", "rpcId": uuid.NewString(), "method": method, "payload": payload})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.URL+"/api/"+method, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.client.Do(req)
	if err != nil {
		return fmt.Errorf("multiproc: %s on node %s: %w", method, n.Name, err)
	}
	defer resp.Body.Close()
	var out struct {
		Result struct {
			OK    bool            `json:"ok"`
			Value json.RawMessage `json:"value"`
			Error RPCError        `json:"error"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return fmt.Errorf("multiproc: %s on node %s: %w", method, n.Name, err)
	}
	if !out.Result.OK {
		out.Result.Error.Method = method
		return &out.Result.Error
	}
	if value == nil {
		return nil
	}
	return json.Unmarshal(out.Result.Value, value)
}

// text is a content array of one text block.
func text(s string) []map[string]string { return []map[string]string{{"type": "text", "text": s}} }

// CreateParent creates a top-level session on the node whose one turn
// spawns children continuable children; it returns once all are listed
// and none runs.
func (n *Node) CreateParent(ctx context.Context, children int) (parent string, ids []string, err error) {
	var created struct{ SessionID string }
	if err := n.Call(ctx, "session.create", map[string]any{}, &created); err != nil {
		return "", nil, err
	}
	var script strings.Builder
	for i := range children {
		fmt.Fprintf(&script, "spawn child-%d: reply ready %d\n", i, i)
	}
	prompt := map[string]any{"sessionId": created.SessionID, "mode": "queue", "content": text(script.String())}
	if err := n.Call(ctx, "session.prompt", prompt, nil); err != nil {
		return "", nil, err
	}
	ids, err = n.awaitChildren(ctx, created.SessionID, children)
	return created.SessionID, ids, err
}

// awaitChildren polls subagent.list until parent has want children, none
// of them active.
func (n *Node) awaitChildren(ctx context.Context, parent string, want int) ([]string, error) {
	for {
		var c struct {
			Entries []struct{ ID, Activity string }
		}
		if err := n.Call(ctx, "subagent.list", map[string]any{"parentSessionId": parent}, &c); err != nil {
			return nil, err
		}
		ids := make([]string, 0, len(c.Entries))
		for _, e := range c.Entries {
			if e.Activity == "inactive" {
				ids = append(ids, e.ID)
			}
		}
		if len(ids) == want {
			return ids, nil
		}
		if err := pause(ctx, 20*time.Millisecond); err != nil {
			return nil, fmt.Errorf("multiproc: children of %s on node %s: %w", parent, n.Name, err)
		}
	}
}

// Followup sends content to child as its parent, which must be live on
// this node; it returns the acknowledged message id.
func (n *Node) Followup(ctx context.Context, parent, child, content string) (string, error) {
	var v struct{ MessageID string }
	err := n.Call(ctx, "subagent.prompt", map[string]any{"parentSessionId": parent, "childSessionId": child, "content": text(content)}, &v)
	return v.MessageID, err
}

// TakeOver makes the top-level session parent live on this node and
// returns how many session.prompts it sent. While another node holds a
// live lease on parent it waits, reading the store every interval (a
// prompt sent now would be accepted and run by that node); once no one
// does, a session.prompt through this node resumes it here. It repeats
// until this node holds the lease, or ctx ends.
func (n *Node) TakeOver(ctx context.Context, parent string, interval time.Duration) (int, error) {
	prompt := map[string]any{"sessionId": parent, "mode": "queue", "content": text("reply taken over by " + n.Name)}
	prompts := 0
	var last error // the last refusal
	for {
		owner, live, err := leaseOf(ctx, n.dsn, parent)
		switch {
		case err != nil:
			return prompts, err
		case live && owner == n.Name:
			return prompts, nil
		case !live:
			prompts++
			var refused *RPCError
			if err := n.Call(ctx, "session.prompt", prompt, nil); errors.As(err, &refused) {
				last = refused
			} else if err != nil {
				return prompts, err
			} else {
				continue
			}
		}
		if err := pause(ctx, interval); err != nil {
			return prompts, fmt.Errorf("multiproc: take %s over on node %s: %w (held by %q, last refusal: %v)", parent, n.Name, err, owner, last)
		}
	}
}

// leaseOf reads who holds session id's lease and whether it is live.
func leaseOf(ctx context.Context, dsn, id string) (owner string, live bool, err error) {
	err = withConn(ctx, dsn, func(conn *pgx.Conn) error {
		var o *string
		err := conn.QueryRow(ctx, `SELECT owner, coalesce(lease_until > now(), false) FROM sessions WHERE id = $1`, id).Scan(&o, &live)
		if o != nil {
			owner = *o
		}
		return err
	})
	return owner, live, err
}

// pause waits d or until ctx ends (then its error).
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lockedBuffer is a bytes.Buffer safe for the process's writer and the
// test's readers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
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

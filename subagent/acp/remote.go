package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/subagent"
)

// gatedReader holds every read of r until opened is closed: the ACP
// connection starts reading as it is built, before it can be configured.
type gatedReader struct {
	r      io.Reader
	opened <-chan struct{}
}

func (g gatedReader) Read(p []byte) (int, error) {
	<-g.opened
	return g.r.Read(p)
}

// remote is one run's agent process and its ACP connection.
type remote struct {
	cfg     Config
	proc    *process
	conn    *sdk.ClientSideConnection
	client  *client
	session sdk.SessionId

	// stopPrompt cancels the prompt's context (set by prompt); prompted is
	// closed when the prompt's goroutine has ended (closed at once when no
	// prompt was sent).
	mu         sync.Mutex
	stopPrompt context.CancelFunc
	prompted   chan struct{}

	teardownOnce sync.Once
	tornDown     chan struct{}
	teardownErr  error
}

func newRemote(cfg Config, proc *process) *remote {
	c := &client{permission: cfg.Permission}
	opened := make(chan struct{})
	conn := sdk.NewClientSideConnection(c, proc.stdin, gatedReader{proc.stdout, opened})
	conn.SetLogger(cfg.Logger)
	close(opened) // the connection reads only once its logger is set
	done := make(chan struct{})
	close(done)
	return &remote{cfg: cfg, proc: proc, conn: conn, client: c, prompted: done, tornDown: make(chan struct{})}
}

// open initializes ACP (offering no client capabilities) and creates the
// session in dir. It blocks until the agent answered both, ctx ended or
// the connection broke.
func (r *remote) open(ctx context.Context, dir string) error {
	if _, err := r.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		return r.failed(ctx, "initialize", err)
	}
	session, err := r.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		return r.failed(ctx, "session/new", err)
	}
	if session.SessionId == "" {
		return fmt.Errorf("subagent/acp: %s answered session/new without a session id", r.cfg.Command)
	}
	r.session = session.SessionId
	return nil
}

// failed names what failed at start; a cancelled ctx says so.
func (r *remote) failed(ctx context.Context, step string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("subagent/acp: the request was cancelled before the agent's session started: %w", ctx.Err())
	}
	return fmt.Errorf("subagent/acp: %s %s: %w", r.cfg.Command, step, err)
}

// prompt sends the prompt on its own goroutine and settles the run with
// the agent's answer. When ctx ends first, session/cancel is sent and the
// run settles aborted once the agent answers, or after the grace if it does
// not; disposal settles it aborted at once. A broken connection settles it
// with stop reason error. It does not block.
func (r *remote) prompt(ctx context.Context, blocks []event.Block, settle func(subagent.Result, error)) {
	promptCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	prompted := make(chan struct{})
	r.mu.Lock()
	r.stopPrompt, r.prompted = stop, prompted
	r.mu.Unlock()
	answered := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(answered)
		resp, err := r.conn.Prompt(promptCtx, sdk.PromptRequest{SessionId: r.session, Prompt: acpPrompt(blocks)})
		settle(r.outcome(ctx.Err() != nil || promptCtx.Err() != nil, resp, err))
	})
	wg.Go(func() {
		select {
		case <-ctx.Done():
		case <-promptCtx.Done():
		case <-answered:
			return
		}
		_ = r.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: r.session})
		grace := time.NewTimer(r.cfg.Grace)
		defer grace.Stop()
		select {
		case <-answered:
		case <-promptCtx.Done():
		case <-grace.C:
		}
		settle(subagent.Result{Output: r.client.output(), StopReason: agent.Aborted}, nil)
		stop()
	})
	go func() {
		wg.Wait()
		close(prompted)
	}()
}

// outcome is the run's result from the agent's answer to the prompt: a
// cancelled run is aborted, a failed request an error (logged), else the
// agent's stop reason; the output is the text streamed so far.
func (r *remote) outcome(cancelled bool, resp sdk.PromptResponse, err error) (subagent.Result, error) {
	output := r.client.output()
	switch {
	case cancelled:
		return subagent.Result{Output: output, StopReason: agent.Aborted}, nil
	case err != nil:
		r.cfg.Logger.Warn(fmt.Sprintf("subagent/acp %q: the agent's turn failed: %v", r.cfg.Name, err))
		return subagent.Result{Output: output, StopReason: agent.Error}, nil
	}
	return subagent.Result{Output: output, StopReason: stopReason(resp.StopReason)}, nil
}

// stopReason maps an ACP stop reason; one without an equivalent
// (max_turn_requests, or one added later) is an error, never completed.
func stopReason(r sdk.StopReason) agent.StopReason {
	switch r {
	case sdk.StopReasonEndTurn:
		return agent.Completed
	case sdk.StopReasonCancelled:
		return agent.Aborted
	case sdk.StopReasonMaxTokens:
		return agent.MaxTokens
	case sdk.StopReasonRefusal:
		return agent.Refusal
	}
	return agent.Error
}

// acpPrompt is the text blocks of blocks as ACP text blocks.
func acpPrompt(blocks []event.Block) []sdk.ContentBlock {
	var prompt []sdk.ContentBlock
	for _, b := range blocks {
		if b.Type == event.BlockText {
			prompt = append(prompt, sdk.TextBlock(b.Text))
		}
	}
	return prompt
}

// teardown ends the run: the prompt is cancelled, stdin closed, the
// process group killed when it has not exited within the grace (at once
// when ctx ends), the process reaped, and the connection's and the run's
// goroutines ended. It blocks until then or ctx ends; the teardown goes on
// and a later call waits again.
func (r *remote) teardown(ctx context.Context) error {
	r.teardownOnce.Do(func() { go r.tearDown() })
	select {
	case <-r.tornDown:
		return r.teardownErr
	case <-ctx.Done():
		r.proc.kill()
		return ctx.Err()
	}
}

func (r *remote) tearDown() {
	r.mu.Lock()
	stop, prompted := r.stopPrompt, r.prompted
	r.mu.Unlock()
	if stop != nil {
		stop()
	}
	err := r.proc.end(r.cfg.Grace)
	<-r.conn.Done()
	<-prompted
	r.teardownErr = err
	close(r.tornDown)
}

// client answers the agent's requests: its streamed text is collected,
// permission requests answered by policy, file and terminal methods
// refused (none was offered).
type client struct {
	permission Permission
	mu         sync.Mutex
	text       strings.Builder
}

func (c *client) output() []event.Block {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.text.Len() == 0 {
		return []event.Block{}
	}
	return event.Text(c.text.String())
}

// SessionUpdate collects the text of the agent's message chunks; other
// updates (thoughts, tool calls, plans) are not part of the result.
func (c *client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	if chunk := n.Update.AgentMessageChunk; chunk != nil && chunk.Content.Text != nil {
		c.mu.Lock()
		c.text.WriteString(chunk.Content.Text.Text)
		c.mu.Unlock()
	}
	return nil
}

// RequestPermission answers by policy: Allow selects the first allow
// option offered (allow_once or allow_always); Deny, or Allow without
// such an option, answers cancelled, whatever reject options the agent
// offered, so that it does not go ahead.
func (c *client) RequestPermission(_ context.Context, req sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	if c.permission == Allow {
		for _, o := range req.Options {
			if o.Kind == sdk.PermissionOptionKindAllowOnce || o.Kind == sdk.PermissionOptionKindAllowAlways {
				return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{
					Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: o.OptionId, Outcome: "selected"}}}, nil
			}
		}
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{
		Cancelled: &sdk.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}}, nil
}

// errNotOffered refuses a client method this client did not offer.
var errNotOffered = errors.New("subagent/acp: this client offers no file system or terminal")

// ReadTextFile is refused.
func (c *client) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, errNotOffered
}

// WriteTextFile is refused.
func (c *client) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, errNotOffered
}

// CreateTerminal is refused.
func (c *client) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errNotOffered
}

// KillTerminal is refused.
func (c *client) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errNotOffered
}

// TerminalOutput is refused.
func (c *client) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errNotOffered
}

// ReleaseTerminal is refused.
func (c *client) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errNotOffered
}

// WaitForTerminalExit is refused.
func (c *client) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errNotOffered
}

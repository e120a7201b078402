package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	acp "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// serveACP answers one ACP client on in/out until in ends or ctx is done,
// logging the connection's diagnostics to logger. Each ACP session is one
// top-level dsh agent of rt whose session id is the ACP session id. It
// blocks until then; the caller closes rt.
func serveACP(ctx context.Context, rt *dsh.Runtime, in io.Reader, out io.Writer, logger *slog.Logger) {
	a := &acpAgent{rt: rt, sessions: map[string]*parent.Handle{}}
	opened := make(chan struct{})
	conn := acp.NewAgentSideConnection(a, out, gatedReader{in, opened})
	a.conn = conn
	conn.SetLogger(logger)
	close(opened) // the connection and a.conn are set before its handlers run
	select {
	case <-conn.Done():
	case <-ctx.Done():
	}
}

// gatedReader holds every read of r until opened is closed: the ACP
// connection starts reading as it is built, and its handlers must see the
// connection they answer on.
type gatedReader struct {
	r      io.Reader
	opened <-chan struct{}
}

func (g gatedReader) Read(p []byte) (int, error) {
	<-g.opened
	return g.r.Read(p)
}

// acpAgent is the agent side of one ACP connection.
type acpAgent struct {
	rt   *dsh.Runtime
	conn *acp.AgentSideConnection

	mu       sync.Mutex
	sessions map[string]*parent.Handle // ACP session id -> its live agent
}

var (
	_ acp.Agent       = (*acpAgent)(nil)
	_ acp.AgentLoader = (*acpAgent)(nil)
)

// Initialize answers with the protocol version and the one optional
// capability served: loading a stored session.
func (a *acpAgent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{
		ProtocolVersion:   acp.ProtocolVersionNumber,
		AgentCapabilities: acp.AgentCapabilities{LoadSession: true},
		AgentInfo:         &acp.Implementation{Name: "dsh-actors", Version: "0"},
	}, nil
}

// Authenticate accepts: the agent needs no credentials from the client.
func (a *acpAgent) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

// NewSession starts a top-level agent over a new session in params.Cwd.
func (a *acpAgent) NewSession(ctx context.Context, params acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	id := uuid.NewString()
	h, err := a.rt.Actors().StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: id, Cwd: params.Cwd}})
	if err != nil {
		return acp.NewSessionResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	a.remember(id, h)
	return acp.NewSessionResponse{SessionId: acp.SessionId(id)}, nil
}

// LoadSession resumes the stored agent params.SessionId (or takes the one
// live here already), replays its conversation as session updates, then
// answers.
func (a *acpAgent) LoadSession(ctx context.Context, params acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	id := string(params.SessionId)
	h := a.session(id)
	if h == nil {
		var err error
		if h, err = a.rt.Actors().ResumeAgent(ctx, id, parent.Spec{}); err != nil {
			return acp.LoadSessionResponse{}, acp.NewInvalidParams(map[string]any{"sessionId": id, "error": err.Error()})
		}
		a.remember(id, h)
	}
	for _, e := range h.Session().Events() {
		for _, update := range replayUpdates(e) {
			if err := a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: params.SessionId, Update: update}); err != nil {
				return acp.LoadSessionResponse{}, err
			}
		}
	}
	return acp.LoadSessionResponse{}, nil
}

// Prompt runs the prompt's text as the agent's next turn, streaming what
// the turn logs as session updates, and answers with how the turn ended. A
// turn that failed is a JSON-RPC error naming its reason.
func (a *acpAgent) Prompt(ctx context.Context, params acp.PromptRequest) (acp.PromptResponse, error) {
	h := a.session(string(params.SessionId))
	if h == nil {
		return acp.PromptResponse{}, acp.NewInvalidParams(map[string]any{"sessionId": string(params.SessionId), "error": "unknown session"})
	}
	turn := newTurnStream(a.rt.Actors().Sessions(), h)
	defer turn.stop()
	if _, err := h.Followup(ctx, event.Text(promptText(params.Prompt)), event.Source{Kind: event.SourceUser}); err != nil {
		return acp.PromptResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	stopCancel := context.AfterFunc(ctx, func() { h.Activation().Cancel(agent.CancelCause{Kind: agent.CauseUser}, false) })
	defer stopCancel()
	reason, err := turn.forward(func(update acp.SessionUpdate) error {
		return a.conn.SessionUpdate(context.WithoutCancel(ctx), acp.SessionNotification{SessionId: params.SessionId, Update: update})
	})
	if err != nil {
		return acp.PromptResponse{}, err
	}
	return promptResponse(reason)
}

// Cancel cancels the session's running turn; its Prompt then answers
// cancelled.
func (a *acpAgent) Cancel(_ context.Context, params acp.CancelNotification) error {
	if h := a.session(string(params.SessionId)); h != nil {
		h.Activation().Cancel(agent.CancelCause{Kind: agent.CauseUser}, false)
	}
	return nil
}

// CloseSession is not served.
func (a *acpAgent) CloseSession(context.Context, acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	return acp.CloseSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionClose)
}

// ListSessions is not served.
func (a *acpAgent) ListSessions(context.Context, acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionList)
}

// ResumeSession is not served (LoadSession is).
func (a *acpAgent) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

// SetSessionConfigOption is not served.
func (a *acpAgent) SetSessionConfigOption(context.Context, acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetConfigOption)
}

// SetSessionMode accepts and changes nothing: the agent has one mode.
func (a *acpAgent) SetSessionMode(context.Context, acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, nil
}

func (a *acpAgent) remember(id string, h *parent.Handle) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sessions[id] = h
}

func (a *acpAgent) session(id string) *parent.Handle {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

// promptText joins the text of the prompt's blocks (and the text of
// embedded text resources), one block a paragraph.
func promptText(blocks []acp.ContentBlock) string {
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			parts = append(parts, b.Resource.Resource.TextResourceContents.Text)
		case b.ResourceLink != nil:
			parts = append(parts, b.ResourceLink.Uri)
		}
	}
	return strings.Join(parts, "\n\n")
}

// errTurnFailed is a turn that ended with stop reason error.
var errTurnFailed = errors.New("the turn failed")

// promptResponse maps how a turn ended to the ACP stop reason; a failed
// turn is an internal error carrying its message and code.
func promptResponse(r vocab.Reason) (acp.PromptResponse, error) {
	switch r.Kind {
	case vocab.ReasonCompleted:
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	case vocab.ReasonAborted:
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	case vocab.ReasonMaxTokens:
		return acp.PromptResponse{StopReason: acp.StopReasonMaxTokens}, nil
	case vocab.ReasonRefusal:
		return acp.PromptResponse{StopReason: acp.StopReasonRefusal}, nil
	}
	detail := map[string]any{"error": fmt.Sprintf("%s: %s", errTurnFailed, r.Text())}
	if code := r.ErrorCode(); code != "" {
		detail["code"] = code
	}
	return acp.PromptResponse{}, acp.NewInternalError(detail)
}

// turnStream queues the events a session appends from its creation on, so
// that a prompt forwards its turn's events in log order.
type turnStream struct {
	updates updateMapper
	mu      sync.Mutex
	queue   []session.Event
	wake    chan struct{}
	cancel  func()
	gone    <-chan struct{}
}

// newTurnStream starts queueing what h's session appends in sessions.
func newTurnStream(sessions *session.Sessions, h *parent.Handle) *turnStream {
	t := &turnStream{wake: make(chan struct{}, 1), gone: h.Disposed()}
	id := h.ID()
	t.cancel = sessions.Subscribe(func(c session.Change) {
		if c.Kind != session.Appended || c.Header.ID != id {
			return
		}
		t.mu.Lock()
		t.queue = append(t.queue, c.Event)
		t.mu.Unlock()
		select {
		case t.wake <- struct{}{}:
		default:
		}
	})
	return t
}

func (t *turnStream) stop() { t.cancel() }

// forward sends each queued event's updates until a turn/end, whose reason
// it returns. It fails when send fails or the agent is disposed first.
func (t *turnStream) forward(send func(acp.SessionUpdate) error) (vocab.Reason, error) {
	for {
		for _, e := range t.take() {
			for _, update := range t.updates.live(e) {
				if err := send(update); err != nil {
					return vocab.Reason{}, err
				}
			}
			if e.Type == vocab.TypeTurnEnd {
				p, err := vocab.Decode(e.Type, e.Data)
				if err != nil {
					return vocab.Reason{}, err
				}
				return p.(vocab.TurnEnd).Reason, nil
			}
		}
		select {
		case <-t.wake:
		case <-t.gone:
			return vocab.Reason{}, acp.NewInternalError(map[string]any{"error": "the agent was disposed before its turn ended"})
		}
	}
}

func (t *turnStream) take() []session.Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	q := t.queue
	t.queue = nil
	return q
}

// updateMapper turns logged events into ACP session updates; it remembers
// whether the current step streamed its text, so a message that was
// streamed is not sent twice.
type updateMapper struct{ streamed bool }

// live are the ACP updates of an event logged during a prompt: streamed
// text and reasoning, a message that was not streamed, tool calls and their
// results.
func (m *updateMapper) live(e session.Event) []acp.SessionUpdate {
	p, err := vocab.Decode(e.Type, e.Data)
	if err != nil {
		return nil
	}
	switch v := p.(type) {
	case vocab.AssistantChunk:
		return m.chunk(v.Chunk)
	case vocab.AssistantMessage:
		streamed := m.streamed
		m.streamed = false
		if !streamed {
			return textUpdates(v.Message.Content, acp.UpdateAgentMessageText)
		}
	case vocab.ToolCall:
		return []acp.SessionUpdate{toolCallStart(v)}
	case vocab.ToolResult:
		return toolResultUpdates(v)
	}
	return nil
}

func (m *updateMapper) chunk(c vocab.Chunk) []acp.SessionUpdate {
	switch c.Type {
	case vocab.ChunkTextDelta:
		m.streamed = true
		return []acp.SessionUpdate{acp.UpdateAgentMessageText(c.Text)}
	case vocab.ChunkReasoningDelta:
		return []acp.SessionUpdate{acp.UpdateAgentThoughtText(c.Text)}
	}
	return nil
}

// replayUpdates are the ACP updates of a stored event when a session is
// loaded: the user's messages, the agent's messages, tool calls and their
// results.
func replayUpdates(e session.Event) []acp.SessionUpdate {
	p, err := vocab.Decode(e.Type, e.Data)
	if err != nil {
		return nil
	}
	switch v := p.(type) {
	case event.UserMessage:
		return textUpdates(v.Content, acp.UpdateUserMessageText)
	case vocab.AssistantMessage:
		return textUpdates(v.Message.Content, acp.UpdateAgentMessageText)
	case vocab.ToolCall:
		return []acp.SessionUpdate{toolCallStart(v)}
	case vocab.ToolResult:
		return toolResultUpdates(v)
	}
	return nil
}

// textUpdates is one update of the text blocks of content, none when it
// has no text.
func textUpdates(content []event.Block, update func(string) acp.SessionUpdate) []acp.SessionUpdate {
	if text := event.TextOf(content); text != "" {
		return []acp.SessionUpdate{update(text)}
	}
	return nil
}

// toolCallStart is a tool call's tool_call update: its id, the tool's
// name as title, in progress, with the model's raw arguments.
func toolCallStart(c vocab.ToolCall) acp.SessionUpdate {
	return acp.StartToolCall(acp.ToolCallId(c.CallID), c.Name,
		acp.WithStartKind(acp.ToolKindOther), acp.WithStartStatus(acp.ToolCallStatusInProgress),
		acp.WithStartRawInput(c.Arguments))
}

// toolResultUpdates are a tool result's tool_call_update updates:
// completed or failed, with the result's text.
func toolResultUpdates(r vocab.ToolResult) []acp.SessionUpdate {
	var updates []acp.SessionUpdate
	for _, b := range r.Message.Content {
		status := acp.ToolCallStatusCompleted
		if b.IsError {
			status = acp.ToolCallStatusFailed
		}
		updates = append(updates, acp.UpdateToolCall(acp.ToolCallId(b.ToolCallID), acp.WithUpdateStatus(status),
			acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(event.TextOf(b.Content)))})))
	}
	return updates
}

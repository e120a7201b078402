package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"unicode"

	acp "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
)

// serveACP answers one ACP client on in/out until in ends or ctx is done,
// logging the connection's diagnostics to logger. Each ACP session is one
// top-level dsh agent of rt whose session id is the ACP session id. It
// blocks until then; the caller closes rt.
func serveACP(ctx context.Context, rt acpRuntime, in io.Reader, out io.Writer, logger *slog.Logger) {
	a := &acpAgent{rt: rt, sessions: map[string]bool{}, slots: map[string]*promptSlot{}}
	opened := make(chan struct{})
	conn := acp.NewAgentSideConnection(a, out, &promptWatcher{r: gatedReader{in, opened}, read: a.promptRead})
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

// promptWatcher passes r's bytes on and, before it passes the end of a
// line, calls read with the session id of a session/prompt request that
// line holds: the agent counts a prompt before the SDK dispatches it, and
// so before any session/cancel sent after it.
type promptWatcher struct {
	r       io.Reader
	read    func(sessionID string)
	partial []byte // the unfinished line passed on so far
}

func (w *promptWatcher) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	chunk := p[:n]
	for {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			w.partial = append(w.partial, chunk...)
			return n, err
		}
		line := chunk[:i]
		if len(w.partial) > 0 {
			line = append(w.partial, line...)
		}
		if id, ok := promptSessionOf(line); ok {
			w.read(id)
		}
		w.partial, chunk = w.partial[:0], chunk[i+1:]
	}
}

// promptSessionOf is the session id of the session/prompt request line
// holds, decoded and validated as the SDK does; false for any other line.
func promptSessionOf(line []byte) (string, bool) {
	if !bytes.Contains(line, []byte(acp.AgentMethodSessionPrompt)) {
		return "", false
	}
	var msg struct {
		ID     *json.RawMessage `json:"id"`
		Method string           `json:"method"`
		Params json.RawMessage  `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.ID == nil || msg.Method != acp.AgentMethodSessionPrompt {
		return "", false
	}
	var req acp.PromptRequest
	if json.Unmarshal(msg.Params, &req) != nil || req.Validate() != nil {
		return "", false
	}
	return string(req.SessionId), true
}

// acpRuntime is what an ACP connection asks of the runtime (a
// *dsh.Runtime; a test counts its reads).
type acpRuntime interface {
	OpenSession(ctx context.Context, spec dsh.SessionSpec) error
	History(ctx context.Context, id string) (dsh.History, error)
	PromptSession(ctx context.Context, id string, content []event.Block, source event.Source) (string, error)
	CancelTurn(ctx context.Context, id string, keepQueued bool) error
	Subscribe(fn func(dsh.Notice)) (cancel func())
}

// acpAgent is the agent side of one ACP connection.
type acpAgent struct {
	rt   acpRuntime
	conn *acp.AgentSideConnection

	mu       sync.Mutex
	sessions map[string]bool        // the ACP session ids this connection opened or loaded
	slots    map[string]*promptSlot // by session id
}

// promptSlot is a session's one prompt slot: how many session/prompt
// requests were read off the wire and have not reached Prompt yet, whether
// a prompt runs, and whether a session/cancel came for the one running or
// for one read and not yet begun. The SDK runs each request on its own
// goroutine and notifications in order on another, so a cancel sent just
// after its prompt can reach Cancel before the prompt reaches Prompt.
type promptSlot struct {
	waiting       int
	active        bool
	cancelled     bool
	cancelWaiting bool
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

// NewSession starts a top-level agent over a new session in params.Cwd,
// which must be an absolute path; extra workspace roots and MCP servers
// are not served (each Invalid params, and nothing is made).
func (a *acpAgent) NewSession(ctx context.Context, params acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	if err := sessionParamsRefusal(params.Cwd, params.AdditionalDirectories, params.McpServers); err != nil {
		return acp.NewSessionResponse{}, err
	}
	id := uuid.NewString()
	if err := a.rt.OpenSession(ctx, dsh.SessionSpec{ID: id, Cwd: params.Cwd}); err != nil {
		return acp.NewSessionResponse{}, thrown(err)
	}
	a.remember(id)
	return acp.NewSessionResponse{SessionId: acp.SessionId(id)}, nil
}

// LoadSession resumes the stored top-level agent params.SessionId (or
// takes the one live here already) in params.Cwd, replays its
// conversation as session updates, then answers. As session/new, a cwd
// that is not absolute is Invalid params; so are an unknown session, a
// subagent's session (as the original's generic routes refuse it: it is
// reached through its parent) and a cwd other than the session's (the
// original's SessionCwdConflict words), and none of them resumes or
// writes anything. The log is read only by the resume (OpenSession reads
// it once to check it and once to resume it); the replay reads the live
// session. Extra workspace roots and MCP servers are refused as
// session/new refuses them.
func (a *acpAgent) LoadSession(ctx context.Context, params acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	id := string(params.SessionId)
	if err := sessionParamsRefusal(params.Cwd, params.AdditionalDirectories, params.McpServers); err != nil {
		return acp.LoadSessionResponse{}, err
	}
	if err := a.rt.OpenSession(ctx, dsh.SessionSpec{ID: id, Cwd: params.Cwd, Resume: true, Existing: true}); err != nil {
		return acp.LoadSessionResponse{}, a.loadRefusal(ctx, id, params.Cwd, err)
	}
	a.remember(id)
	log, err := a.rt.History(ctx, id) // the live session's: the resume read the log
	if err != nil {
		return acp.LoadSessionResponse{}, thrown(err)
	}
	for _, e := range log.Events {
		for _, update := range replayUpdates(e) {
			if err := a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: params.SessionId, Update: update}); err != nil {
				return acp.LoadSessionResponse{}, err
			}
		}
	}
	return acp.LoadSessionResponse{}, nil
}

// sessionParamsRefusal is the Invalid params error for session/new's or
// session/load's cwd, extra workspace roots and MCP servers, checked in
// that order; nil when the agent serves them: an absolute cwd, neither
// extra roots nor MCP servers.
func sessionParamsRefusal(cwd string, dirs []string, servers []acp.McpServer) error {
	switch {
	case !filepath.IsAbs(cwd):
		return invalidParams("cwd must be an absolute path: " + cwd)
	case len(dirs) > 0:
		return invalidParams("additionalDirectories is not supported")
	case len(servers) > 0:
		return invalidParams("mcpServers is not supported")
	}
	return nil
}

// loadRefusal is session/load's answer to OpenSession's err for id asked
// for in cwd: Invalid params for a session that cannot be read (unknown,
// or its log refused) and, in the original's words, for a subagent's
// session and for another cwd (the session's, read again to name it),
// else Internal error.
func (a *acpAgent) loadRefusal(ctx context.Context, id, cwd string, err error) error {
	switch {
	case strings.HasPrefix(string(fault.CodeOf(err)), "SESSION_QUERY_"):
		return invalidParams(err.Error())
	case errors.Is(err, fault.OwnedBySubagent):
		return invalidParams(fmt.Sprintf("session %q is owned by subagent routing", id))
	case errors.Is(err, fault.CwdConflict):
		stored, readErr := a.rt.History(ctx, id)
		if readErr != nil {
			return thrown(readErr)
		}
		return invalidParams(fmt.Sprintf("session %q already exists with cwd %s; requested %s", id, jsonQuoted(stored.Header.Cwd), jsonQuoted(cwd)))
	default:
		return thrown(err)
	}
}

// jsonQuoted is JSON.stringify of s (no HTML escaping); an empty s (no
// cwd) is undefined.
func jsonQuoted(s string) string {
	if s == "" {
		return "undefined"
	}
	return jsonString(s)
}

// jsonString is s as a JSON string, without HTML escaping.
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// Prompt runs the prompt's text as the agent's next turn, sending what
// the turn logs as session updates, and answers with how the turn ended. A
// turn that failed is a JSON-RPC error naming its reason. One prompt is in
// flight per session: another meanwhile is Invalid params and leaves the
// first running (the SDK cancels the first one's ctx then, so only
// session/cancel cancels a turn). A prompt without text, or with blocks
// beyond text and resource links, is Invalid params and starts no turn.
func (a *acpAgent) Prompt(ctx context.Context, params acp.PromptRequest) (acp.PromptResponse, error) {
	id := string(params.SessionId)
	a.promptBegun(id)
	if !a.session(id) {
		return acp.PromptResponse{}, invalidParams("unknown session: " + id)
	}
	claimed, cancelled := a.startPrompt(id)
	if !claimed {
		return acp.PromptResponse{}, invalidParams("a prompt is already in flight for this session")
	}
	defer a.endPrompt(id)
	if beyondBaseline(params.Prompt) {
		return acp.PromptResponse{}, invalidParams("only text and resource_link prompt content is supported")
	}
	text := promptText(params.Prompt)
	if isBlank(text) {
		return acp.PromptResponse{}, invalidParams("empty prompt")
	}
	if cancelled {
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	turn := newTurnStream(a.rt, id)
	defer turn.stop()
	messageID, err := a.rt.PromptSession(context.WithoutCancel(ctx), id, event.Text(text), event.Source{Kind: event.SourceUser})
	if err != nil {
		return acp.PromptResponse{}, internalError("prompt was not queued: " + err.Error())
	}
	if a.promptCancelled(id) { // the cancel may have come before the message was queued
		_ = a.rt.CancelTurn(context.WithoutCancel(ctx), id, false)
	}
	reason, err := turn.forward(messageID, func(update acp.SessionUpdate) error {
		return a.conn.SessionUpdate(context.WithoutCancel(ctx), acp.SessionNotification{SessionId: params.SessionId, Update: update})
	})
	if err != nil {
		return acp.PromptResponse{}, err
	}
	return promptResponse(reason)
}

// Cancel cancels the session's running turn; its Prompt then answers
// cancelled. A cancel that overtakes the prompt sent before it (the SDK
// dispatches requests and notifications on different goroutines) cancels
// that prompt as it begins, and one that comes while the prompt's message
// waits in the inbox discards it: either way the prompt answers cancelled.
func (a *acpAgent) Cancel(ctx context.Context, params acp.CancelNotification) error {
	if id := string(params.SessionId); a.session(id) {
		a.cancelPrompt(id)
		_ = a.rt.CancelTurn(ctx, id, false)
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

// SetSessionMode is not served: the agent advertises no modes.
func (a *acpAgent) SetSessionMode(context.Context, acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetMode)
}

func (a *acpAgent) remember(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sessions[id] = true
}

// slot is session id's prompt slot, made when missing; a.mu is held.
func (a *acpAgent) slot(id string) *promptSlot {
	s := a.slots[id]
	if s == nil {
		s = &promptSlot{}
		a.slots[id] = s
	}
	return s
}

// promptRead counts a session/prompt request for session id read off the
// wire, before the SDK dispatches it.
func (a *acpAgent) promptRead(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.slot(id).waiting++
}

// promptBegun uncounts a request promptRead counted, as Prompt takes it.
func (a *acpAgent) promptBegun(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.slot(id); s.waiting > 0 {
		s.waiting--
	}
	a.forget(id)
}

// startPrompt claims session id's one prompt slot (false when a prompt
// holds it) and reports whether a cancel already came for the prompt.
func (a *acpAgent) startPrompt(id string) (claimed, cancelled bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.slot(id)
	if s.active {
		return false, false
	}
	s.active, s.cancelled, s.cancelWaiting = true, s.cancelWaiting, false
	return true, s.cancelled
}

// promptCancelled reports whether a cancel came for session id's running
// prompt.
func (a *acpAgent) promptCancelled(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.slot(id).cancelled
}

// cancelPrompt marks session id's running prompt cancelled, or the one
// read and not yet begun.
func (a *acpAgent) cancelPrompt(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch s := a.slot(id); {
	case s.active:
		s.cancelled = true
	case s.waiting > 0:
		s.cancelWaiting = true
	}
	a.forget(id)
}

// endPrompt frees session id's prompt slot.
func (a *acpAgent) endPrompt(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.slot(id)
	s.active, s.cancelled = false, false
	a.forget(id)
}

// forget drops session id's slot when it holds nothing; a.mu is held.
func (a *acpAgent) forget(id string) {
	if s := a.slots[id]; s != nil && *s == (promptSlot{}) {
		delete(a.slots, id)
	}
}

// invalidParams is the original's Invalid params error: the detail
// follows the code's message, and there is no data.
func invalidParams(detail string) *acp.RequestError {
	return &acp.RequestError{Code: -32602, Message: "Invalid params: " + detail}
}

// internalError is the original's Internal error worded by the bridge:
// the detail follows the code's message, and there is no data.
func internalError(detail string) *acp.RequestError {
	return &acp.RequestError{Code: -32603, Message: "Internal error: " + detail}
}

// thrown is a failure the bridge does not word (the runtime's) as the
// original's SDK answers a thrown error: Internal error with the error's
// message as data.details.
func thrown(err error) *acp.RequestError {
	return acp.NewInternalError(map[string]any{"details": err.Error()})
}

func (a *acpAgent) session(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

// beyondBaseline reports whether the prompt holds a block other than text
// and resource links, the two every ACP agent must take: the bridge
// advertises no image, audio or embedded-context capability.
func beyondBaseline(blocks []acp.ContentBlock) bool {
	for _, b := range blocks {
		if b.Text == nil && b.ResourceLink == nil {
			return true
		}
	}
	return false
}

// isBlank reports whether text is empty once trimmed as JavaScript's
// String.prototype.trim trims (Unicode white space and U+FEFF).
func isBlank(text string) bool {
	return strings.TrimFunc(text, func(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' }) == ""
}

// promptText is the prompt's text and resource link blocks in order, with
// nothing between them: a text block verbatim, a resource link as the
// line `[resource_link name="NAME" uri="URI"]` (both JSON strings).
func promptText(blocks []acp.ContentBlock) string {
	var b strings.Builder
	for _, block := range blocks {
		switch {
		case block.Text != nil:
			b.WriteString(block.Text.Text)
		case block.ResourceLink != nil:
			fmt.Fprintf(&b, "\n[resource_link name=%s uri=%s]\n", jsonString(block.ResourceLink.Name), jsonString(block.ResourceLink.Uri))
		}
	}
	return b.String()
}

// promptResponse maps how a turn ended to the ACP stop reason: a turn
// cancelled, disposed (the runtime closing under it) or interrupted is
// cancelled, one cut off or refused says so, and any other ending is
// end_turn; a failed turn is an internal error carrying its message.
func promptResponse(end event.TurnEnd) (acp.PromptResponse, error) {
	stop := acp.StopReasonEndTurn
	switch end.Reason {
	case string(agent.Error):
		return acp.PromptResponse{}, internalError("turn failed: " + end.Message)
	case string(agent.Aborted), "disposed", "interrupted":
		stop = acp.StopReasonCancelled
	case string(agent.MaxTokens):
		stop = acp.StopReasonMaxTokens
	case string(agent.Refusal):
		stop = acp.StopReasonRefusal
	}
	return acp.PromptResponse{StopReason: stop}, nil
}

// turnStream queues what a session appends from its creation on, and
// when its agent stops running, so that a prompt forwards its turn's
// events in log order and knows when its retry chain is over.
type turnStream struct {
	mu     sync.Mutex
	queue  []dsh.Notice // SessionAppended, SessionRunning and MessageLeft notices
	wake   chan struct{}
	cancel func()
	gone   chan struct{} // closed when the session leaves the runtime
}

// newTurnStream starts queueing what session id appends in rt.
func newTurnStream(rt acpRuntime, id string) *turnStream {
	t := &turnStream{wake: make(chan struct{}, 1), gone: make(chan struct{})}
	var left sync.Once
	t.cancel = rt.Subscribe(func(n dsh.Notice) {
		if n.SessionID != id {
			return
		}
		switch n.Kind {
		case dsh.SessionReleased:
			left.Do(func() { close(t.gone) })
			return
		case dsh.SessionAppended, dsh.SessionRunning, dsh.MessageLeft:
		default:
			return
		}
		t.mu.Lock()
		t.queue = append(t.queue, n)
		t.mu.Unlock()
		select {
		case t.wake <- struct{}{}:
		default:
		}
	})
	return t
}

func (t *turnStream) stop() { t.cancel() }

// forward sends each queued event's updates until the turn of the prompt
// messageID ends, and returns how it ended (aborted when a cancel
// discarded the message before a turn took it). A failed turn's end is held until the agent
// stops running or another message's turn starts: a retry turn over the
// same prompt may follow it, and then the retry's end is the answer.
// forward fails when send fails or the agent is disposed first.
func (t *turnStream) forward(messageID string, send func(acp.SessionUpdate) error) (event.TurnEnd, error) {
	var failed *event.TurnEnd
	for {
		for _, n := range t.take() {
			if n.Kind == dsh.MessageLeft {
				if n.MessageID == messageID && n.Discarded { // cancelled before a turn took it
					return event.TurnEnd{Reason: string(agent.Aborted)}, nil
				}
				continue
			}
			if n.Kind == dsh.SessionRunning {
				if failed != nil && !n.Running {
					return *failed, nil
				}
				continue
			}
			if retry, isStart := turnStart(n.Event); isStart && failed != nil {
				if !retry {
					return *failed, nil
				}
				failed = nil
			}
			p, err := n.Event.Payload()
			for _, update := range liveUpdates(p) {
				if err := send(update); err != nil {
					return event.TurnEnd{}, err
				}
			}
			end, isEnd := p.(event.TurnEnd)
			switch {
			case !isEnd:
			case err == nil && agent.StopReason(end.Reason) == agent.Error:
				failed = &end
			default:
				return end, err
			}
		}
		select {
		case <-t.wake:
		case <-t.gone:
			return event.TurnEnd{}, internalError("the agent was disposed before its turn ended")
		}
	}
}

// turnStart reports whether e is a turn/start and whether that turn is a
// retry of the turn before it (its trigger's kind is "retry").
func turnStart(e dsh.Event) (retry, isStart bool) {
	if e.Type != "turn/start" {
		return false, false
	}
	var start struct {
		Trigger *struct {
			Kind string `json:"kind"`
		} `json:"trigger"`
	}
	err := json.Unmarshal(e.Data, &start)
	return err == nil && start.Trigger != nil && start.Trigger.Kind == "retry", true
}

func (t *turnStream) take() []dsh.Notice {
	t.mu.Lock()
	defer t.mu.Unlock()
	q := t.queue
	t.queue = nil
	return q
}

// liveUpdates are the ACP updates of the payload of an event logged
// during a prompt: a committed assistant message's text and reasoning
// blocks, tool calls and their results. Streamed chunks are not sent: a
// model call that fails and is retried leaves its partial chunks in the
// log, and text sent once cannot be taken back.
func liveUpdates(p event.Payload) []acp.SessionUpdate {
	switch v := p.(type) {
	case event.AssistantMessage:
		return messageUpdates(v.Content)
	case event.ToolCall:
		return []acp.SessionUpdate{toolCallStart(v)}
	case event.ToolResult:
		return toolResultUpdates(v)
	}
	return nil
}

// messageUpdates are an assistant message's updates, one per block with
// text: agent_message_chunk for a text block, agent_thought_chunk for a
// reasoning block.
func messageUpdates(content []event.Block) []acp.SessionUpdate {
	var updates []acp.SessionUpdate
	for _, b := range content {
		switch {
		case b.Text == "":
		case b.Type == event.BlockText:
			updates = append(updates, acp.UpdateAgentMessageText(b.Text))
		case b.Type == event.BlockReasoning:
			updates = append(updates, acp.UpdateAgentThoughtText(b.Text))
		}
	}
	return updates
}

// replayUpdates are the ACP updates of a stored event when a session is
// loaded: the user's messages, the agent's messages, tool calls and their
// results.
func replayUpdates(e dsh.Event) []acp.SessionUpdate {
	p, err := e.Payload()
	if err != nil {
		return nil
	}
	switch v := p.(type) {
	case event.UserMessage:
		return textUpdates(v.Content, acp.UpdateUserMessageText)
	case event.AssistantMessage:
		return textUpdates(v.Content, acp.UpdateAgentMessageText)
	case event.ToolCall:
		return []acp.SessionUpdate{toolCallStart(v)}
	case event.ToolResult:
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
func toolCallStart(c event.ToolCall) acp.SessionUpdate {
	return acp.StartToolCall(acp.ToolCallId(c.CallID), c.Name,
		acp.WithStartKind(acp.ToolKindOther), acp.WithStartStatus(acp.ToolCallStatusInProgress),
		acp.WithStartRawInput(c.Arguments))
}

// toolResultUpdates are a tool result's tool_call_update updates:
// completed or failed, with the result's text.
func toolResultUpdates(r event.ToolResult) []acp.SessionUpdate {
	var updates []acp.SessionUpdate
	for _, out := range r.Results {
		status := acp.ToolCallStatusCompleted
		if out.IsError {
			status = acp.ToolCallStatusFailed
		}
		updates = append(updates, acp.UpdateToolCall(acp.ToolCallId(out.CallID), acp.WithUpdateStatus(status),
			acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(event.TextOf(out.Content)))})))
	}
	return updates
}

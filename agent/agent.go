package agent

import (
	"context"
	"encoding/json"

	"github.com/dsh-actors/dsh-actors/event"
)

// StopReason is how a turn ended.
type StopReason string

// The stop reasons a turn can end with.
const (
	Completed StopReason = "completed"
	Aborted   StopReason = "aborted"
	Error     StopReason = "error"
	MaxTokens StopReason = "max-tokens"
	Refusal   StopReason = "refusal"
	// Retry, returned with the failure as RunTurn's error, ends the turn
	// in error (its step the last step the turn opened) and asks for the
	// same message to be run again as a new turn, opened with trigger
	// {kind:"retry"} and no new user/message. The runtime opens it unless
	// the turn was cancelled; a retry chain is one message's work. Without
	// an error it is a plain failed turn.
	Retry StopReason = "retry"
)

// Host is what a running turn may do. It is bound to one agent's identity
// and is valid only while the turn runs; its methods are safe for
// concurrent use within the turn. Every append fails once ctx is done, once
// the turn is over, and when the session refuses it.
type Host interface {
	// SessionID is the id of the session (and agent) the turn runs on.
	SessionID() string
	// Say logs one whole step holding one assistant message with the given
	// content: step/start, assistant/message, step/end. It fails while a
	// step opened by Step is open.
	Say(ctx context.Context, content []event.Block) error
	// Subagents is the continuable-children capability bound to this agent,
	// or nil when the runtime has no subagent service.
	Subagents() Subagents
	// Conversation is the agent's conversation as the model sees it now, in
	// order: every message on the session's surface (a fork's inherited
	// prefix, every earlier epoch, compaction replacements applied),
	// including the message that opened this turn and what this turn has
	// logged so far. It reads memory only; an error means the log's surface
	// is malformed.
	Conversation() ([]Entry, error)
	// Step opens the turn's next step (logs step/start; steps count from 1
	// in each turn) for one model call and what it leads to. It fails while
	// another step is open. A step the agent leaves open when the turn
	// ends is closed by the runtime (step/end before turn/end).
	Step(ctx context.Context) (Step, error)
}

// Step is one open step of a turn: the message of one model call (or of
// the agent's own reasoning), then the calls it made and their results.
// Its methods log in the order they are called and fail after End.
type Step interface {
	// Number is the step's number within its turn, from 1.
	Number() int
	// Message logs the step's assistant/message (content may hold
	// tool-call blocks, see event.ToolCallBlock) and returns the new
	// message's id.
	Message(ctx context.Context, content []event.Block) (messageID string, err error)
	// ToolCall logs tool/call as the call starts.
	ToolCall(ctx context.Context, call event.ToolCallBlock) error
	// ToolResult logs tool/result for a call this turn logged with
	// ToolCall (its sourceEventSeqs name that tool/call) and returns the
	// result message's id. A call id without a logged tool/call fails.
	ToolResult(ctx context.Context, result ToolResult) (messageID string, err error)
	// End logs step/end. Calling it again does nothing.
	End(ctx context.Context) error
}

// ToolResult is the outcome of one tool call: the content the model reads
// back, whether it is an error, and optionally the failure's {name, code}
// and tool-specific metadata (JSON).
type ToolResult struct {
	CallID  string
	Content []event.Block
	IsError bool
	Error   *event.ToolFailure
	Meta    json.RawMessage
}

// Entry is one message of the conversation. Role is event.RoleUser (Source
// says who: kind "user", "coordinator" with SenderSessionID, …),
// event.RoleAssistant (Model attributes it; Content holds text, reasoning
// and tool-call blocks) or event.RoleTool (a tool result: ToolCallID, IsError and
// the result's Content; Source is {kind:"tool", callId}). Seq is the log
// seq of the event holding it.
type Entry struct {
	Seq        int64
	Role       string
	ID         string
	Source     event.Source
	Model      event.ModelSource
	Content    []event.Block
	ToolCallID string
	IsError    bool
}

// Subagents starts continuable children of the calling agent and sends them
// follow-ups. Every call returns at inbox acceptance, not when the child's
// turn runs.
type Subagents interface {
	// Spawn starts a fresh continuable child with a durable label and its
	// first prompt, returning the child id and the accepted message id.
	Spawn(ctx context.Context, label, prompt string) (childID, messageID string, err error)
	// Fork is Spawn through the fork provider: the child's log starts with
	// the calling agent's completed turns, so its conversation holds them
	// (not the turn that forks it).
	Fork(ctx context.Context, label, prompt string) (childID, messageID string, err error)
	// Send delivers text to a child this agent is the direct parent of, as
	// the child's next turn.
	Send(ctx context.Context, childID, text string) (messageID string, err error)
	// Wait blocks until the resident epoch of childID, a child this agent
	// is the direct parent of, ends and returns its end with ok true (an
	// epoch ends once its turns ran, it owns no undisposed child and it
	// was disposed). With no epoch resident it returns at once the end of
	// the child's most recent epoch in this runtime, or ok false when none
	// ended here. Another agent's child is fault.Unauthorized.
	Wait(ctx context.Context, childID string) (end ChildEnd, ok bool, err error)
	// Children lists this agent's direct continuable children from the
	// durable catalog, in creation order (then id), never waking one.
	Children(ctx context.Context) ([]Child, error)
}

// Agent is the contract user code implements: one turn per message. RunTurn
// receives the message that opened the turn, appends its output through
// host, honours ctx cancellation (returning Aborted), and reports how the
// turn ended. A non-nil error or a panic is a failed turn (reason Error).
// A turn that returns Retry with its failure is followed by a retry turn:
// RunTurn is called again with the same message.
type Agent interface {
	RunTurn(ctx context.Context, host Host, msg event.UserMessage) (StopReason, error)
}

// Func adapts a function to Agent.
type Func func(ctx context.Context, host Host, msg event.UserMessage) (StopReason, error)

// RunTurn calls f.
func (f Func) RunTurn(ctx context.Context, host Host, msg event.UserMessage) (StopReason, error) {
	return f(ctx, host, msg)
}

package agent

import (
	"encoding/json"

	"github.com/dsh-actors/dsh-actors/event"
)

// Options describe the agent a Factory builds. They are plain data; the
// runtime passes the same values it records in the agent's log.
type Options struct {
	// SessionID is the id of the session (and agent) the agent runs on.
	SessionID string
	// ParentSession is the durable direct parent from the session header,
	// empty for a top-level agent.
	ParentSession string
	// Provider and Model attribute the agent's assistant messages; the
	// runtime logs "scripted" for either when it is empty.
	Provider string
	Model    string
	// MaxTokens bounds one model response; 0 means the agent's default.
	MaxTokens int
	// SubagentDepth is the agent's delegation depth at run time (it may be
	// deeper than the header's durable floor, never shallower).
	SubagentDepth int
	// Persona replaces the deployment persona when set.
	Persona string
	// ToolFilter restricts the agent's tools when set.
	ToolFilter *event.ToolFilter
	// OutputSchema, when set, is the JSON Schema (an object schema) the
	// final answer of a one-shot child must be a JSON value of.
	OutputSchema json.RawMessage
	// Resumed is true when the agent is rebuilt from a stored log.
	Resumed bool
}

// Factory builds the Agent for one live agent. It must not block. It
// returns nil when it builds no agent for these options (a route it does
// not know): the start or resume then fails with fault.NotResumable
// naming the route.
type Factory func(Options) Agent

// The kinds of CancelCause (the original's cancel causes).
const (
	CauseUser     = "user"
	CauseParent   = "parent"
	CauseDisposed = "disposed"
	CauseHook     = "hook"
)

// CancelCause says who cancelled a turn. It is the context.Cause of a
// cancelled turn's ctx (errors.As finds it) and becomes turn/end
// {kind:"aborted", reason:{kind[, reason]}} in the log.
type CancelCause struct {
	Kind   string // CauseUser, CauseParent, CauseDisposed or CauseHook
	Reason string // only for CauseHook
}

// Error describes the cause; a CancelCause is the error a cancelled turn's
// context reports through context.Cause.
func (c CancelCause) Error() string {
	if c.Reason != "" {
		return "turn cancelled: " + c.Kind + ": " + c.Reason
	}
	return "turn cancelled: " + c.Kind
}

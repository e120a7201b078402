package agent

import (
	"context"
	"encoding/json"
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
)

// Block is one content block of a message: its type and, when it has a
// string one, its text. A block that is more than {"type":…,"text":"…"} (an
// image, a text block with other keys) keeps all of itself in Raw, which is
// what its JSON is (see block.go).
type Block struct {
	Type string
	Text string
	// Raw is the whole block as JSON.stringify writes it, nil for a plain
	// {"type":…,"text":"…"} block. Set by UnmarshalJSON and LooseBlock.
	// When set it is the block's JSON, whatever Type and Text say: code
	// that changes a block must clear it.
	Raw json.RawMessage
}

// Text returns a single text block holding s.
func Text(s string) []Block { return []Block{{Type: "text", Text: s}} }

// Source says where a message came from. It is attribution only: it grants
// no authority. Kind is "user" (a person, or the initial continuable prompt)
// or "coordinator" (a parent agent relaying work; SenderSessionID set).
type Source struct {
	Kind            string `json:"kind"`
	SenderSessionID string `json:"senderSessionId,omitempty"`
	RPCID           string `json:"rpcId,omitempty"`
}

// Message is a user message as the original logs it in a user/message event:
// {content, source, role:"user", id} in that key order.
type Message struct {
	Content []Block `json:"content"`
	Source  Source  `json:"source"`
	Role    string  `json:"role"` // always "user"
	ID      string  `json:"id"`
}

// Host is what a running turn may do. It is bound to one agent's identity
// and is valid only while the turn runs.
type Host interface {
	// SessionID is the id of the session (and agent) the turn runs on.
	SessionID() string
	// Say appends an assistant/message with the given content to the log.
	Say(ctx context.Context, content []Block) error
	// Subagents is the continuable-children capability bound to this agent,
	// or nil when the runtime has no subagent service.
	Subagents() Subagents
}

// Subagents starts continuable children of the calling agent and sends them
// follow-ups. Both calls return at inbox acceptance, not when the child's
// turn runs.
type Subagents interface {
	// Spawn starts a fresh continuable child with a durable label and its
	// first prompt, returning the child id and the accepted message id.
	Spawn(ctx context.Context, label, prompt string) (childID, messageID string, err error)
	// Send delivers text to a child this agent is the direct parent of, as
	// the child's next turn.
	Send(ctx context.Context, childID, text string) (messageID string, err error)
}

// Agent is the contract user code implements: one turn per message. RunTurn
// receives the message that opened the turn, appends its output through
// host, honours ctx cancellation (returning Aborted), and reports how the
// turn ended. A non-nil error or a panic is a failed turn (reason Error).
type Agent interface {
	RunTurn(ctx context.Context, host Host, msg Message) (StopReason, error)
}

// Func adapts a function to Agent.
type Func func(ctx context.Context, host Host, msg Message) (StopReason, error)

// RunTurn calls f.
func (f Func) RunTurn(ctx context.Context, host Host, msg Message) (StopReason, error) {
	return f(ctx, host, msg)
}

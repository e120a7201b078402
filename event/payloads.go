package event

import "encoding/json"

// Source says where a message came from. It is attribution only: it grants
// no authority. Kind is "user" (a person, or the initial continuable
// prompt), "coordinator" (a parent agent relaying work; SenderSessionID
// set), "tool" (a tool result; CallID set) or another kind an older or
// newer writer used.
type Source struct {
	Kind string `json:"kind"`
	// Plugin names the component that wrote a message of kind "plugin".
	Plugin          string `json:"plugin,omitempty"`
	SenderSessionID string `json:"senderSessionId,omitempty"`
	RPCID           string `json:"rpcId,omitempty"`
	CallID          string `json:"callId,omitempty"`
}

// UserMessage is the payload of user/message, which is the message itself:
// {content, source, role:"user", id} in that key order.
type UserMessage struct {
	Content []Block `json:"content"`
	Source  Source  `json:"source"`
	Role    string  `json:"role"` // always "user"
	ID      string  `json:"id"`
}

// ModelSource attributes an assistant message: {kind:"model", provider,
// model, replayState?}.
type ModelSource struct {
	Kind        string          `json:"kind"`
	Provider    string          `json:"provider"`
	Model       string          `json:"model"`
	ReplayState json.RawMessage `json:"replayState,omitempty"`
}

// ToolFailure names a tool failure: {name, code}.
type ToolFailure struct {
	Name string `json:"name"`
	Code string `json:"code"`
}

// ToolFilter restricts which tools an agent may use: only Allow (when
// set), never Deny. In a subagent descriptor a nil list is absent and
// omitted; a non-nil empty list is present and written as [].
type ToolFilter struct {
	Allow []string `json:"allow,omitzero"`
	Deny  []string `json:"deny,omitzero"`
}

// EventType is "user/message", the event type a UserMessage is logged
// under (the log vocabulary's TypeUserMessage, held equal by its tests).
func (UserMessage) EventType() string { return "user/message" }

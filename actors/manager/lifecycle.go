package manager

import (
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/jsjson"
)

// RunInfo is the subagent/start payload {runId, provider, id, local} of a
// one-shot run or a continuable epoch, plus the delegating parent's session
// id: the scope both edges belong to (never encoded).
type RunInfo struct {
	RunID    string `json:"runId"`
	Provider string `json:"provider"`
	ID       string `json:"id"`
	Local    bool   `json:"local"`
	ParentID string `json:"-"`
}

// RunEndInfo is the subagent/end payload: the start's fields plus the stop
// reason and, when present, the last assistant message. A nil
// LastAssistantMessage means the key is absent; a non-nil empty slice is an
// empty message (one-shot runs always carry their output).
type RunEndInfo struct {
	RunInfo
	StopReason           agent.StopReason `json:"stopReason"`
	LastAssistantMessage []event.Block    `json:"lastAssistantMessage,omitempty"`
	// DiscardedFollowups counts the messages the child's inbox had
	// accepted (a follow-up, or the first prompt) that the epoch discarded
	// before they ran, by its teardown, a cancel, or because its session
	// log failed: they were never logged and are lost. The key
	// discardedFollowups is absent when it is zero.
	DiscardedFollowups int `json:"discardedFollowups,omitempty"`
}

// MarshalJSON keeps an empty non-nil LastAssistantMessage as [] and omits a
// nil one; nothing is HTML-escaped (the blocks' bytes pass as they are).
func (e RunEndInfo) MarshalJSON() ([]byte, error) {
	type plain struct {
		RunID                string           `json:"runId"`
		Provider             string           `json:"provider"`
		ID                   string           `json:"id"`
		Local                bool             `json:"local"`
		StopReason           agent.StopReason `json:"stopReason"`
		LastAssistantMessage *[]event.Block   `json:"lastAssistantMessage,omitempty"`
		DiscardedFollowups   int              `json:"discardedFollowups,omitempty"`
	}
	p := plain{RunID: e.RunID, Provider: e.Provider, ID: e.ID, Local: e.Local, StopReason: e.StopReason,
		DiscardedFollowups: e.DiscardedFollowups}
	if e.LastAssistantMessage != nil {
		p.LastAssistantMessage = &e.LastAssistantMessage
	}
	return jsjson.Marshal(p)
}

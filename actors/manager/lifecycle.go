package manager

import (
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
)

// RunInfo is a continuable epoch's subagent/start: {runId, provider, id,
// local}, plus the delegating parent's session id (the scope both edges
// are dispatched to).
type RunInfo struct {
	RunID    string
	Provider string
	ID       string
	Local    bool
	ParentID string
}

// RunEndInfo is the epoch's subagent/end: the start's fields plus the stop
// reason, the last assistant message (nil: none) and the count of accepted
// messages the epoch discarded unrun (by its teardown, a cancel, or its
// log's failure).
type RunEndInfo struct {
	RunInfo
	StopReason           agent.StopReason
	LastAssistantMessage []event.Block
	DiscardedFollowups   int
}

// Observer receives the lifecycle edges of continuable epochs. Started is
// called once the epoch is resident, before its prompt is submitted; an error
// from it is a publication failure and rolls the unpublished Activation back
// with no end edge. Ended is called after the epoch's disposal settled and
// ownership was released. Both are called from the manager's goroutines and
// must not block on the manager.
type Observer interface {
	Started(RunInfo) error
	Ended(RunEndInfo)
}

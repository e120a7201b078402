package agent

import "github.com/dsh-actors/dsh-actors/event"

// ChildEnd is how one epoch of a continuable child ended: the stop reason
// of its last turn, the content of its last assistant message (nil when
// the epoch logged none) and how many messages its inbox had accepted
// that the epoch discarded before they ran (by its teardown, a cancel, or
// a failed log): those were never logged and are lost.
type ChildEnd struct {
	StopReason           StopReason
	LastAssistantMessage []event.Block
	DiscardedFollowups   int
}

// LastAssistantText is the text of the epoch's last assistant message ("" when
// there is none).
func (e ChildEnd) LastAssistantText() string { return event.TextOf(e.LastAssistantMessage) }

// Child is one entry of a parent's durable catalog of continuable
// children: a child with its durable Label and Status ("running" when it
// is live in this runtime, "complete" when it is only stored, which is no
// outcome: a Send runs a new turn), or, for a child whose log cannot be
// read, its Diagnostic ("corrupt", "unsupported" or "unavailable") with
// no Label or Status.
type Child struct {
	ID         string
	Label      string
	Status     string
	Diagnostic string
}

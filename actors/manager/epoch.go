package manager

import (
	"encoding/json"

	agentactor "github.com/dsh-actors/dsh-actors/actors/activation"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// epochReport is what one resident period of a continuable child reports
// on its subagent/end edge, taken from the events it appended itself.
type epochReport struct {
	// StopReason is the mapped reason of the last closed message-triggered
	// turn of the epoch (a retry chain's last closed turn), or completed
	// when no such turn closed.
	StopReason agent.StopReason
	// Output is the content of the epoch's last assistant/message, even when
	// empty (non-nil); nil when the epoch logged no assistant message.
	Output []event.Block
	// Closed reports whether a message-triggered turn closed in the epoch.
	Closed bool
}

// captureEpoch folds an epoch's own events (the log suffix from the epoch
// boundary taken at subagent/start) into its stop reason and output, with
// these rules: output is the content of the last assistant/message
// even if empty; the stop reason is that of the last closed turn whose
// turn/start trigger kind was "message" (a turn/start without a trigger
// counts as message-triggered, since every turn here is opened by an inbox
// message), or "retry" in a chain a message opened, so that a message's
// outcome is its retry chain's last, as the agent settles it; mapped by
// mapTurnEnd; no such turn means completed. It scans
// backwards and decodes only the events it needs, so its cost does not
// grow with the epoch.
func captureEpoch(own []session.Event) epochReport {
	epoch := epochReport{StopReason: agent.Completed, Output: lastOutput(own)}
	if reason, ok := lastMessageTurnEnd(own); ok {
		epoch.StopReason, epoch.Closed = mapTurnEnd(reason), true
	}
	return epoch
}

// recordedEpoch is captureEpoch for an epoch whose Activation recorded
// what its turns logged (activation.Activation.Outcome), decoding at most
// the one assistant/message named there: events is the whole session log
// and boundary the epoch's first own event. The rules are captureEpoch's:
// an Activation's turns are all opened by a message or retry a chain a
// message opened, so the last turn/end it logged is the epoch's closed
// turn when its chain started within the epoch.
func recordedEpoch(act *agentactor.Activation, events []session.Event, boundary int) epochReport {
	chainStart, reason, outputSeq := act.Outcome()
	epoch := epochReport{StopReason: agent.Completed}
	if outputSeq >= int64(boundary) && outputSeq < int64(len(events)) {
		epoch.Output = lastOutput(events[outputSeq : outputSeq+1])
	}
	if chainStart >= int64(boundary) {
		epoch.StopReason, epoch.Closed = mapTurnEnd(reason), true
	}
	return epoch
}

// RunOutcome is what a one-shot run reports from the events its child
// appended after the run's prompt: the output and stop reason as an
// epoch's are captured (the last assistant message, and the mapped reason
// of the last message-triggered turn that closed), except that a run
// cancelled before any such turn closed is aborted. It does not block.
func RunOutcome(own []session.Event, cancelled bool) (output []event.Block, reason agent.StopReason) {
	epoch := captureEpoch(own)
	if !epoch.Closed && cancelled {
		return epoch.Output, agent.Aborted
	}
	return epoch.Output, epoch.StopReason
}

// lastOutput is the content of the last assistant/message, or nil.
func lastOutput(events []session.Event) []event.Block {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type != vocab.TypeAssistantMessage {
			continue
		}
		if msg, err := vocab.DecodeAs[vocab.AssistantMessage](vocab.TypeAssistantMessage, events[i].Data); err == nil {
			return append([]event.Block{}, msg.Message.Content...)
		}
	}
	return nil
}

// lastMessageTurnEnd returns the reason kind of the last turn/end whose
// turn/start (within events) was message-triggered.
func lastMessageTurnEnd(events []session.Event) (string, bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type != vocab.TypeTurnEnd {
			continue
		}
		var end turnEndHead
		if err := json.Unmarshal(events[i].Data, &end); err != nil || end.Reason.Kind == "" {
			continue
		}
		if messageTriggered(events[:i], end.Turn) {
			return end.Reason.Kind, true
		}
	}
	return "", false
}

// turnEndHead is what lastMessageTurnEnd reads of a turn/end: its turn
// and its reason's kind (the rest of the reason is not decoded: an epoch
// ending in a drain reads one per child).
type turnEndHead struct {
	Turn   int `json:"turn"`
	Reason struct {
		Kind string `json:"kind"`
	} `json:"reason"`
}

// messageTriggered reports whether the last turn/start of turn number n in
// events was opened by a message, or is a retry turn of a chain a message
// opened (a retry turn retries the turn started before it).
func messageTriggered(events []session.Event, n int) bool {
	found := false
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type != vocab.TypeTurnStart {
			continue
		}
		start, err := vocab.DecodeAs[vocab.TurnStart](vocab.TypeTurnStart, events[i].Data)
		if err != nil || !found && start.Turn != n {
			continue
		}
		found = true
		switch {
		case start.Trigger == nil || start.Trigger.Kind == vocab.TriggerMessage:
			return true
		case start.Trigger.Kind != vocab.TriggerRetry:
			return false
		}
	}
	return false
}

// mapTurnEnd maps a turn/end reason kind onto a subagent stop reason:
// max-tokens, error, completed and refusal map to themselves; aborted,
// interrupted and disposed map to aborted; anything else is error.
// (Refusal is kept rather than reported as error: this runtime's agents
// can end a turn with refusal.)
func mapTurnEnd(kind string) agent.StopReason {
	switch kind {
	case vocab.ReasonCompleted:
		return agent.Completed
	case vocab.ReasonMaxTokens:
		return agent.MaxTokens
	case vocab.ReasonRefusal:
		return agent.Refusal
	case vocab.ReasonAborted, vocab.ReasonInterrupted, vocab.ReasonDisposed:
		return agent.Aborted
	default:
		return agent.Error
	}
}

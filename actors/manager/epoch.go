package manager

import (
	"encoding/json"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/session"
)

// Epoch is what one resident period of a continuable child reports on its
// subagent/end edge, taken from the events it appended itself.
type Epoch struct {
	// StopReason is the mapped reason of the last closed message-triggered
	// turn of the epoch, or completed when no such turn closed.
	StopReason agent.StopReason
	// Output is the content of the epoch's last assistant/message, even when
	// empty (non-nil); nil when the epoch logged no assistant message.
	Output []event.Block
	// Closed reports whether a message-triggered turn closed in the epoch.
	Closed bool
}

// CaptureEpoch folds an epoch's own events (the log suffix from the epoch
// boundary taken at subagent/start) into its stop reason and output, with
// these rules: output is the content of the last assistant/message
// even if empty; the stop reason is that of the last closed turn whose
// turn/start trigger kind was "message" (a turn/start without a trigger
// counts as message-triggered, since every turn here is opened by an inbox
// message), mapped by MapTurnEnd; no such turn means completed. It scans
// backwards and decodes only the events it needs, so its cost does not
// grow with the epoch.
func CaptureEpoch(own []session.Event) Epoch { return captureEpoch(own, false) }

// captureLiveEpoch is CaptureEpoch over a live session's events, whose
// payloads the session has already checked to be valid JSON.
func captureLiveEpoch(own []session.Event) Epoch { return captureEpoch(own, true) }

func captureEpoch(own []session.Event, valid bool) Epoch {
	epoch := Epoch{StopReason: agent.Completed, Output: lastOutput(own)}
	if reason, ok := lastMessageTurnEnd(own, valid); ok {
		epoch.StopReason, epoch.Closed = mapTurnEnd(reason), true
	}
	return epoch
}

// lastOutput is the content of the last assistant/message, or nil.
func lastOutput(events []session.Event) []event.Block {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type != event.TypeAssistantMessage {
			continue
		}
		var msg assistantMessage
		if json.Unmarshal(events[i].Data, &msg) == nil {
			return append([]event.Block{}, msg.Message.Content...)
		}
	}
	return nil
}

// lastMessageTurnEnd returns the reason kind of the last turn/end whose
// turn/start (within events) was message-triggered.
func lastMessageTurnEnd(events []session.Event, valid bool) (string, bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type != event.TypeTurnEnd {
			continue
		}
		end, ok := decodeTurnEnd(events[i].Data, valid)
		if !ok {
			continue
		}
		if messageTriggered(events[:i], end.Turn, valid) {
			return end.Reason.Kind, true
		}
	}
	return "", false
}

// messageTriggered reports whether the last turn/start of turn number n in
// events was opened by a message.
func messageTriggered(events []session.Event, n int64, valid bool) bool {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type != event.TypeTurnStart {
			continue
		}
		if turn, trigger, ok := decodeTurnStart(events[i].Data, valid); ok && turn == n {
			return !trigger.present || trigger.kind == "message"
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
	case "completed":
		return agent.Completed
	case "max-tokens":
		return agent.MaxTokens
	case "refusal":
		return agent.Refusal
	case "aborted", "interrupted", "disposed":
		return agent.Aborted
	default:
		return agent.Error
	}
}

type turnStart struct {
	Turn    int64 `json:"turn"`
	Trigger *struct {
		Kind string `json:"kind"`
	} `json:"trigger"`
}

type turnEnd struct {
	Turn   int64 `json:"turn"`
	Reason struct {
		Kind string `json:"kind"`
	} `json:"reason"`
}

type assistantMessage struct {
	Message struct {
		Content []event.Block `json:"content"`
	} `json:"message"`
}

package manager

import (
	"encoding/json"

	"github.com/dsh-actors/dsh-actors/agent"
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
	Output []agent.Block
	// Turns counts the message-triggered turns that closed in the epoch.
	Turns int
}

// CaptureEpoch folds an epoch's own events (the log suffix from the epoch
// boundary taken at subagent/start) into its stop reason and output, with
// the seed-era rules: output is the content of the last assistant/message
// even if empty; the stop reason is that of the last closed turn whose
// turn/start trigger kind was "message" (a turn/start without a trigger
// counts as message-triggered, since every turn here is opened by an inbox
// message), mapped by MapTurnEnd; no such turn means completed.
func CaptureEpoch(own []session.Event) Epoch {
	epoch := Epoch{StopReason: agent.Completed}
	open := map[int64]bool{} // turn number → message-triggered
	for _, ev := range own {
		switch ev.Type {
		case "turn/start":
			var start turnStart
			if json.Unmarshal(ev.Data, &start) == nil {
				open[start.Turn] = start.Trigger == nil || start.Trigger.Kind == "message"
			}
		case "turn/end":
			var end turnEnd
			if json.Unmarshal(ev.Data, &end) != nil {
				continue
			}
			if byMessage, seen := open[end.Turn]; seen && byMessage {
				epoch.StopReason = MapTurnEnd(end.Reason.Kind)
				epoch.Turns++
			}
			delete(open, end.Turn)
		case "assistant/message":
			var msg assistantMessage
			if json.Unmarshal(ev.Data, &msg) == nil {
				epoch.Output = append([]agent.Block{}, msg.Message.Content...)
			}
		}
	}
	return epoch
}

// MapTurnEnd maps a turn/end reason kind onto a subagent stop reason:
// max-tokens, error, completed and refusal map to themselves; aborted,
// interrupted and disposed map to aborted; anything else is error.
// (The seed era had no refusal turn end; this runtime's agents can end a
// turn with refusal, so it is kept rather than reported as error.)
func MapTurnEnd(kind string) agent.StopReason {
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
		Content []agent.Block `json:"content"`
	} `json:"message"`
}

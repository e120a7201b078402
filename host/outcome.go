package host

import (
	"encoding/json"

	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// turnOutcome is how a session's last finished turn ended when it did not
// complete: session.list's lastTurn {kind, cause?, message?, code?}. kind
// is the turn/end reason's kind (error, aborted, interrupted, max-tokens,
// refusal, blocked, disposed), cause an aborted turn's canceller, message
// and code a failed turn's.
type turnOutcome struct {
	Kind    string `json:"kind"`
	Cause   string `json:"cause,omitempty"`
	Message string `json:"message,omitempty"`
	Code    string `json:"code,omitempty"`
}

// outcomeOf reads the data of a turn/end event as its outcome; nil for
// none (nil data), a completed turn or an end whose reason cannot be read.
func outcomeOf(data json.RawMessage) *turnOutcome {
	var end vocab.TurnEnd
	if data == nil || json.Unmarshal(data, &end) != nil || end.Reason.Kind == vocab.ReasonCompleted {
		return nil
	}
	o := &turnOutcome{Kind: end.Reason.Kind, Message: end.Reason.Text(), Code: end.Reason.ErrorCode()}
	if end.Reason.Cause != nil {
		o.Cause = end.Reason.Cause.Kind
	}
	return o
}

package host

import (
	"encoding/json"

	"github.com/dsh-actors/dsh-actors/internal/index"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
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

// lastTurnOf is the outcome of the last turn in events, nil when that turn
// completed, is still open (a turn/start after the last turn/end) or there
// is none.
func lastTurnOf(events []session.Event) *turnOutcome {
	for i := len(events) - 1; i >= 0; i-- {
		switch events[i].Type {
		case vocab.TypeTurnStart:
			return nil
		case vocab.TypeTurnEnd:
			return outcomeOf(events[i])
		}
	}
	return nil
}

// outcomeOf reads a turn/end event's outcome; nil for a completed turn or
// an end whose reason cannot be read.
func outcomeOf(e session.Event) *turnOutcome {
	var end vocab.TurnEnd
	if json.Unmarshal(e.Data, &end) != nil || end.Reason.Kind == vocab.ReasonCompleted {
		return nil
	}
	o := &turnOutcome{Kind: end.Reason.Kind, Message: end.Reason.Text(), Code: end.Reason.ErrorCode()}
	if end.Reason.Cause != nil {
		o.Cause = end.Reason.Cause.Kind
	}
	return o
}

// indexedFacts are the facts the derived index holds of a stored session:
// its title and how its last turn ended, read without its log.
func indexedFacts(title index.Title) sessionFacts {
	facts := sessionFacts{title: title.Text}
	if title.LastTurnEnd != nil {
		facts.lastTurn = outcomeOf(session.Event{Type: vocab.TypeTurnEnd, Data: title.LastTurnEnd})
	}
	return facts
}

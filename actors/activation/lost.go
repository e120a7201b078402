package activation

import (
	"encoding/json"
	"errors"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// LostMessage is the message of the error line logged for each accepted
// message that will never reach the session log because the log failed
// (a full disk, say), with attributes agent, messageId and err: the one a
// turn claimed, and each one still queued then, which is also discarded
// (agent/inbox/discard).
const LostMessage = "actors: accepted message lost: its session log failed"

// fencedTurn is the message of the error line logged for a turn whose
// session lease was taken over (fault.Fenced): the turn failed and
// nothing of it is written under the old epoch, not even its turn/end;
// attributes agent, turn, code and err.
const fencedTurn = "actors: turn failed: the session's lease was fenced"

// logFailed is the session's write-failure hook: every user message among
// the events that will never be durable is reported lost, then every
// queued message is discarded and reported lost, as it could not be
// logged either. A fenced
// log also cancels the running turn at once (its work could never be
// written) and, once no turn runs, tells the agent's owner (see
// OnFenced), which stops it.
func (a *Activation) logFailed(unwritten []session.Event, err error) {
	if errors.Is(err, fault.Fenced) {
		defer a.inbox.AfterIdle(a.fenced)
		defer a.inbox.Cancel(agent.CancelCause{Kind: agent.CauseDisposed}, false)
	}
	for _, e := range unwritten {
		if e.Type != vocab.TypeUserMessage {
			continue
		}
		var msg struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(e.Data, &msg) // the activation wrote it from an event.UserMessage
		a.reportLost(msg.ID, err)
	}
	a.discardLost(err)
}

// discardLost discards every queued message and reports each lost with
// err.
func (a *Activation) discardLost(err error) {
	for _, id := range a.inbox.Discard() {
		a.reportLost(id, err)
	}
}

// fenced calls the owner's fence hook, if one is set.
func (a *Activation) fenced() {
	if fn := a.onFenced.Load(); fn != nil {
		(*fn)()
	}
}

// refused handles a claimed message the session refused to log: it and
// the queue behind it, discarded, are reported lost.
func (a *Activation) refused(messageID string, err error) {
	a.reportLost(messageID, err)
	a.discardLost(err)
}

func (a *Activation) reportLost(messageID string, err error) {
	a.kit.logger.Error(LostMessage, "agent", a.id(), "messageId", messageID, "err", err)
}

// reportFenced logs turn as failed when the session's lease was fenced,
// and reports whether it was.
func (a *Activation) reportFenced(turn int) bool {
	err := a.live.WriteFailure()
	if !errors.Is(err, fault.Fenced) {
		return false
	}
	a.kit.logger.Error(fencedTurn, "agent", a.id(), "turn", turn, "code", string(fault.Fenced), "err", err)
	return true
}

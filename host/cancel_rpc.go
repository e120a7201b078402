package host

import (
	"context"
	"errors"

	"github.com/dsh-actors/dsh-actors/fault"
)

// sessionCancel answers session.cancel {sessionId} with {accepted: true}
// once the top-level agent's running turn, if any, was told to stop (it
// ends with turn/end aborted, cause user). Its queued messages stay queued
// and the next runs once that turn ended, as the original's cancel with
// keepInbox. It does not wait for the turn to end. A session no agent is
// attached to here (stored and asleep, run by another process that holds
// its lease, or unknown) has nothing to stop: it is the original's
// session-not-found, `session "<id>" not found (not attached)`, and
// nothing is woken; a live subagent session is refused with agent-busy.
func (h *Handler) sessionCancel(ctx context.Context, c call) (any, *rpcError) {
	p := readPayload(c.payload)
	id := p.sessionID("sessionId")
	if bad := invalidPayload(c, p); bad != nil {
		return nil, bad
	}
	err := h.backend.CancelSession(ctx, id)
	switch {
	case err == nil:
		return acceptedValue{Accepted: true}, nil
	case errors.Is(err, fault.AgentNotFound):
		return nil, newError(codeSessionNotFound, "session "+quote(id)+" not found (not attached)", details{SessionID: id})
	case errors.Is(err, codeAgentBusy):
		return nil, ownedBySubagentRouting(id)
	default:
		h.logFailure("session.cancel", err)
		return nil, newError(codeInternal, "session cancel failed", nil)
	}
}

// CancelSession is the runtime's CancelTurn, classified.
func (b *runtimeBackend) CancelSession(ctx context.Context, id string) error {
	return classify(ctx, b.dsh.CancelTurn(ctx, id, true))
}

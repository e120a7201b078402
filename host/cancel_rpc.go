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
// keepInbox. It does not wait for the turn to end. A session another
// process runs (it holds the lease) cannot be stopped from here: it is
// agent-busy, as session.prompt and session.create answer it. Any other
// session no agent is attached to here (stored and asleep, or unknown)
// has nothing to stop: it is the original's session-not-found,
// `session "<id>" not found (not attached)`. Nothing is woken either way.
// A subagent session, live here or elsewhere, is refused with agent-busy,
// owned by subagent routing.
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
	case errors.Is(err, fault.LeaseHeld):
		return nil, leasedElsewhere(id)
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

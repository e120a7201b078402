package host

import (
	"context"
	"errors"
)

// sessionCancel answers session.cancel {sessionId} with {accepted: true}
// once the top-level agent's running turn, if any, was told to stop (it
// ends with turn/end aborted, cause user) and its queued messages were
// discarded. It does not wait for the turn to end. A session that is not
// live has nothing to stop and is accepted as it is, without waking it; a
// subagent session is refused with agent-busy, an unknown id with
// session-not-found.
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
	case isCancelled(ctx, err):
		return nil, newError(codeCancelled, "session cancel was cancelled", nil)
	case errors.Is(err, codeSessionNotFound):
		return nil, sessionNotFound(id)
	case errors.Is(err, codeAgentBusy):
		return nil, ownedBySubagentRouting(id)
	default:
		h.logFailure("session.cancel", err)
		if named, ok := unreadableLog("cancel failed for session "+quote(id), err); ok {
			return nil, named
		}
		return nil, newError(codeInternal, "session cancel failed", nil)
	}
}

// CancelSession is the runtime's CancelTurn, classified.
func (b *runtimeBackend) CancelSession(ctx context.Context, id string) error {
	return classify(ctx, b.dsh.CancelTurn(ctx, id))
}

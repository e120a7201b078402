package host

import (
	"context"
	"errors"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// classify maps runtime errors onto the host's classes (Wrap); an aborted
// ctx wins, unknown errors pass through and end up internal. LEASE_HELD
// (the session runs in another process, which holds its lease) is a
// delivery refused for now, as a drain's is; session.prompt tells it
// apart (leasedElsewhere).
func classify(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil || isAny(err, context.Canceled, fault.Cancelled):
		return wrap(codeCancelled, err)
	case isAny(err, fault.QuerySessionNotFound, session.ErrNotFound):
		return wrap(codeSessionNotFound, err)
	case errors.Is(err, fault.OwnedBySubagent):
		return wrap(codeAgentBusy, err)
	case errors.Is(err, fault.NotResumable):
		return wrap(codeSubagentNotResumable, err)
	case isAny(err, fault.Fenced, fault.ParentNotLive): // the sender left, or its lease is gone: it is no live parent here
		return wrap(codeSubagentParentUnavailable, err)
	case errors.Is(err, fault.Unauthorized):
		return wrap(codeSubagentUnauthorized, err)
	case isAny(err, fault.Draining, fault.ActivationClosing, fault.LeaseHeld):
		return wrap(codeSubagentNotDelivered, err)
	default:
		return err
	}
}

// sessionBlank is the original's sessionBlank: no turn has run yet, that is,
// the events hold no turn/start. A new continuable child already holds its
// descriptor (and a resumed session its end-seed) and is still blank, so
// host/session-added for it carries blank:true.
func sessionBlank(events []session.Event) bool {
	for _, e := range events {
		if e.Type == vocab.TypeTurnStart {
			return false
		}
	}
	return true
}

func isAny(err error, targets ...error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

package host

import (
	"context"
	"errors"

	"github.com/dsh-actors/dsh-actors/event"
)

// subagentList answers subagent.list {parentSessionId} with the complete
// direct catalog and whether the exact parent is live (a hint only).
func (h *Handler) subagentList(ctx context.Context, c call) (any, *rpcError) {
	p := readPayload(c.payload)
	parent := p.sessionID("parentSessionId")
	if bad := invalidPayload(c, p); bad != nil {
		return nil, bad
	}
	r, err := h.catalog.share(ctx, parent)
	if err == nil {
		err = r.err
	}
	var rows []byte
	if err == nil {
		rows, err = h.catalog.wireRows(parent, r)
	}
	if err != nil {
		if isCancelled(ctx, err) {
			return nil, newError(codeCancelled, "subagent catalog read was cancelled", nil)
		}
		h.logFailure("subagent.list", err)
		return nil, newError(codeInternal, "subagent catalog read failed", nil)
	}
	_, live := h.backend.LiveAgent(parent)
	return encodedCatalog{rows: rows, parentAvailable: live}, nil
}

// subagentHistory answers subagent.history: verify the address in the
// parent's catalog, read the child's transcript without activating anything,
// check the child still names that parent, then cut one page.
func (h *Handler) subagentHistory(ctx context.Context, c call) (any, *rpcError) {
	p := readPayload(c.payload)
	parent, child := p.sessionID("parentSessionId"), p.sessionID("childSessionId")
	beforeSeq := p.optionalInt("beforeSeq", false)
	maxMessages := p.optionalInt("maxMessages", true)
	if bad := invalidPayload(c, p); bad != nil {
		return nil, bad
	}
	if bad := h.verifyAddress(ctx, parent, child); bad != nil {
		return nil, bad
	}
	transcript, err := h.backend.ReadSession(ctx, child)
	if err != nil {
		return nil, h.historyReadError(ctx, parent, child, err)
	}
	if transcript.ParentSessionID != parent {
		return nil, newError(codeSubagentUnauthorized, "subagent parent changed during history read",
			details{ChildSessionID: child})
	}
	return toHistoryValue(paginate(transcript.Events, beforeSeq, pageSize(maxMessages))), nil
}

func (h *Handler) historyReadError(ctx context.Context, parent, child string, err error) *rpcError {
	switch {
	case isCancelled(ctx, err):
		return newError(codeCancelled, "subagent history read was cancelled", nil)
	case errors.Is(err, codeSessionNotFound):
		return newError(codeSubagentNotFound, "subagent disappeared during history read",
			details{ParentSessionID: parent, ChildSessionID: child})
	default:
		h.logFailure("subagent.history", err)
		return newError(codeInternal, "subagent history read failed", nil)
	}
}

// subagentPrompt answers subagent.prompt: the exact parent must be live,
// here or in another process on a shared store (checked before any
// catalog read), the address must be a healthy continuable child, then
// the continuation service delivers the content, or for a parent live
// elsewhere the child's durable inbox takes it.
func (h *Handler) subagentPrompt(ctx context.Context, c call) (any, *rpcError) {
	p := readPayload(c.payload)
	parent, child := p.sessionID("parentSessionId"), p.sessionID("childSessionId")
	content := p.content("content")
	if bad := invalidPayload(c, p); bad != nil {
		return nil, bad
	}
	parentAgent, live := h.backend.LiveAgent(parent)
	if !live {
		elsewhere, ok, err := h.backend.LiveElsewhere(ctx, parent)
		if err != nil {
			return nil, h.followupError(ctx, parent, child, err)
		}
		parentAgent, live = elsewhere, ok
	}
	if !live {
		return nil, newError(codeSubagentParentUnavailable, "parent session "+quote(parent)+" is not live",
			details{ParentSessionID: parent})
	}
	if bad := h.verifyAddress(ctx, parent, child); bad != nil {
		return nil, bad
	}
	source := event.Source{Kind: "user", RPCID: c.rpcID}
	messageID, err := h.backend.Followup(ctx, parentAgent, child, content, source)
	if err != nil {
		return nil, h.followupError(ctx, parent, child, err)
	}
	return messageIDValue{MessageID: messageID}, nil
}

// followupError maps a continuation failure; an aborted request wins first.
// A parent whose lease this process lost meanwhile (another took it over)
// is no live parent: subagent-parent-unavailable, as one found not live.
func (h *Handler) followupError(ctx context.Context, parent, child string, err error) *rpcError {
	childOnly := details{ChildSessionID: child}
	switch {
	case isCancelled(ctx, err):
		return newError(codeCancelled, "subagent prompt was cancelled", nil)
	case errors.Is(err, codeSubagentParentUnavailable):
		return newError(codeSubagentParentUnavailable, "parent session "+quote(parent)+" is not live",
			details{ParentSessionID: parent})
	case errors.Is(err, codeSubagentNotResumable):
		return newError(codeSubagentNotResumable, "subagent cannot be resumed", childOnly)
	case errors.Is(err, codeSubagentUnauthorized):
		return newError(codeSubagentUnauthorized, "subagent does not belong to this parent", childOnly)
	case errors.Is(err, codeSubagentNotDelivered):
		return newError(codeSubagentNotDelivered, "message was not delivered", childOnly)
	case isDiskFull(err):
		h.logFailure("subagent.prompt", err)
		return storageFull(child, true)
	default:
		h.logFailure("subagent.prompt", err)
		return newError(codeInternal, "subagent prompt failed", nil)
	}
}

// verifyAddress re-reads the parent's complete direct catalog and requires
// child to be a healthy entry. Seed 004's address is {parentSessionId,
// childSessionId}: there is no mode, every catalog row is continuable.
func (h *Handler) verifyAddress(ctx context.Context, parent, child string) *rpcError {
	entries, err := h.catalog.read(ctx, parent)
	if err != nil {
		return h.catalogVerifyError(ctx, parent, child, err)
	}
	for _, e := range entries {
		if e.ID != child {
			continue
		}
		if e.Kind == kindDiagnostic {
			return newError(codeSubagentCatalogDiagnostic, "subagent "+quote(child)+" is "+e.Reason,
				details{ParentSessionID: parent, ChildSessionID: child, Reason: e.Reason})
		}
		return nil
	}
	return newError(codeSubagentNotFound, "session "+quote(child)+" is not a continuable direct child of "+quote(parent),
		details{ParentSessionID: parent, ChildSessionID: child})
}

func (h *Handler) catalogVerifyError(ctx context.Context, parent, child string, err error) *rpcError {
	switch {
	case isCancelled(ctx, err):
		return newError(codeCancelled, "subagent catalog read was cancelled", nil)
	case errors.Is(err, codeSessionNotFound):
		return newError(codeSubagentNotFound, "parent session "+quote(parent)+" is unavailable",
			details{ParentSessionID: parent, ChildSessionID: child})
	default:
		h.logFailure("subagent catalog", err)
		return newError(codeInternal, "subagent catalog read failed", nil)
	}
}

// isCancelled reports whether the request was aborted or the backend
// reported a cancellation.
func isCancelled(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, codeCancelled) || errors.Is(err, context.Canceled)
}

// pageSize is maxMessages or the default page of 50.
func pageSize(maxMessages *int64) int {
	if maxMessages == nil {
		return defaultMaxMessages
	}
	return int(min(*maxMessages, 1<<30))
}

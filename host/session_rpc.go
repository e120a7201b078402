package host

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/index"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/google/uuid"
)

// sessionList answers session.list {cursor?} with {items}: every session,
// live or stored, newest activity first (updatedAt descending, ties in the
// backend's order), each as the original's sessionSummary. cursor is the
// original's reserved, unimplemented seat: validated, then ignored.
func (h *Handler) sessionList(ctx context.Context, c call) (any, *rpcError) {
	p := readPayload(c.payload)
	p.optionalString("cursor", false)
	if bad := invalidPayload(c, p); bad != nil {
		return nil, bad
	}
	summaries, err := h.backend.ListSessions(ctx)
	if err != nil {
		if isCancelled(ctx, err) {
			return nil, newError(codeCancelled, "session list was cancelled", nil)
		}
		h.logFailure("session.list", err)
		var unreadable *unreadableSession
		if errors.As(err, &unreadable) { // say what failed
			return nil, unreadableError(unreadable)
		}
		return nil, newError(codeInternal, "session list failed", nil)
	}
	items := make([]sessionItem, len(summaries))
	for i, s := range summaries {
		items[i] = h.sessionItem(s)
	}
	slices.SortStableFunc(items, func(a, b sessionItem) int { return cmp.Compare(b.UpdatedAt, a.UpdatedAt) })
	return sessionItems{Items: items}, nil
}

// unreadableError is session.list's internal error naming what failed
// the store's listing in the store's own words, which name the file.
func unreadableError(u *unreadableSession) *rpcError {
	return newError(codeInternal, "session list failed: "+u.err.Error(), nil)
}

// sessionItem is one session.list row in the original's key order:
// {sessionId, updatedAt, running, blank, parentSessionId?, cwd?,
// projections?}. An attached (live) session's blank is its Attachment's (no
// turn/start yet) and it carries projections {asOfSeq: its last seq,
// values: {title}}, title being this runtime's session title (the first
// line of its first user message) or null. A stored session is never
// blank; it carries projections as the original's cold rows with a
// projection cache row do, cut at the stored event its title was derived
// with (TitleAsOfSeq), and none when its log could not be read.
func (h *Handler) sessionItem(s sessionSummary) sessionItem {
	item := sessionItem{SessionID: s.ID, UpdatedAt: s.UpdatedAt, Running: s.Running,
		ParentSessionID: s.ParentSessionID, Cwd: s.Cwd, Live: s.Live, LastTurn: s.LastTurn}
	if h.hub.source != nil {
		if a, ok := h.hub.source.Attachment(s.ID); ok && a.SessionID == s.ID {
			item.Blank = a.Blank
			item.Projections = newProjections(a.LastSeq, s.Title)
			return item
		}
	}
	if s.TitleAsOfSeq != nil {
		item.Projections = newProjections(*s.TitleAsOfSeq, s.Title)
	}
	return item
}

type sessionItem struct {
	SessionID       string              `json:"sessionId"`
	UpdatedAt       float64             `json:"updatedAt"`
	Running         bool                `json:"running"`
	Blank           bool                `json:"blank"`
	ParentSessionID string              `json:"parentSessionId,omitempty"`
	Cwd             string              `json:"cwd,omitempty"`
	Projections     *sessionProjections `json:"projections,omitempty"`
	Live            bool                `json:"live,omitempty"`
	LastTurn        *turnOutcome        `json:"lastTurn,omitempty"`
}

// sessionProjections is the original's SessionProjectionsBlock with the one
// projection this runtime has, title.
type sessionProjections struct {
	AsOfSeq int64 `json:"asOfSeq"`
	Values  struct {
		Title *string `json:"title"`
	} `json:"values"`
}

// newProjections is the block cut at asOfSeq, title null when empty.
func newProjections(asOfSeq int64, title string) *sessionProjections {
	p := &sessionProjections{AsOfSeq: asOfSeq}
	if title != "" {
		p.Values.Title = &title
	}
	return p
}

// projectionsOf is the block of a whole transcript: cut at its last event
// (-1 for none), titled from its first user message.
func projectionsOf(events []session.Event) *sessionProjections {
	asOfSeq, title := int64(-1), ""
	for _, e := range events {
		asOfSeq = e.Seq
		if t, ok := index.TitleOf(e); ok && title == "" {
			title = t
		}
	}
	return newProjections(asOfSeq, title)
}

// sessionHistoryValue is session.history's {events, hasMore, projections?}:
// projections only on the tail page (no beforeSeq), as the original's.
type sessionHistoryValue struct {
	historyValue
	Projections *sessionProjections `json:"projections,omitempty"`
}

type sessionItems struct {
	Items []sessionItem `json:"items"`
}

// sessionCreate answers session.create {workspaceId?, cwd?, sessionId?}
// with {sessionId} of a new live top-level agent. All three are optional;
// the ids are non-empty, sessionId short enough to name a session folder,
// cwd a non-empty absolute path without NUL, inside Options.CwdRoot when
// that is set (nothing is made otherwise); workspaceId and cwd exclude each other
// (checked only when both are strings). This runtime has no workspaces, so
// any workspaceId is workspace-not-found. Otherwise Backend.CreateSession
// opens the requested sessionId or a minted session-<uuid>, in the
// requested cwd or Options.Cwd; a subagent session is never adopted
// (agent-busy).
func (h *Handler) sessionCreate(ctx context.Context, c call) (any, *rpcError) {
	p := readPayload(c.payload)
	workspaceID, hasWorkspace := p.optionalString("workspaceId", true)
	cwd, hasCwd := p.optionalString("cwd", true)
	if hasCwd {
		p.path("cwd", cwd)
		p.requestedCwd("cwd", cwd, h.opts.CwdRoot)
	}
	requestedID, hasID := p.optionalString("sessionId", true)
	if hasID {
		p.storableID("sessionId", requestedID)
	}
	if p.fields != nil && isJSONString(p.fields["workspaceId"]) && isJSONString(p.fields["cwd"]) {
		p.add(issueConflict, nil, "session.create accepts workspaceId or cwd, not both")
	}
	if bad := invalidPayload(c, p); bad != nil {
		return nil, bad
	}
	if hasWorkspace {
		return nil, newError(codeWorkspaceNotFound, "workspace "+quote(workspaceID)+" not found",
			workspaceDetails{WorkspaceID: workspaceID})
	}
	req := createRequest{ID: requestedID, Cwd: cwd, Requested: hasID}
	if !hasID {
		req.ID = "session-" + uuid.NewString()
	}
	if !hasCwd {
		req.Cwd = h.opts.Cwd
	}
	summary, err := h.backend.CreateSession(ctx, req)
	if err != nil {
		if isCancelled(ctx, err) {
			return nil, newError(codeCancelled, "session create was cancelled", nil)
		}
		if conflict := (*sessionConflict)(nil); errors.As(err, &conflict) {
			details := conflictDetails{SessionID: conflict.SessionID, RequestedCwd: conflict.RequestedCwd}
			if conflict.HasExisting {
				details.ExistingCwd = &conflict.ExistingCwd
			}
			return nil, newError(codeSessionConflict, conflict.Error(), details)
		}
		if errors.Is(err, codeAgentBusy) {
			return nil, ownedBySubagentRouting(requestedID)
		}
		if errors.Is(err, fault.LeaseHeld) {
			return nil, leasedElsewhere(req.ID)
		}
		h.logFailure("session.create", err)
		if isDiskFull(err) {
			return nil, storageFull(req.ID, false)
		}
		if named, ok := unreadableLog("failed to create session "+quote(req.ID), err); ok {
			return nil, named
		}
		return nil, newError(codeInternal, "session create failed", nil)
	}
	return createdValue{SessionID: summary.ID}, nil
}

// codeSessionConflict is the original's session-conflict: a requested
// sessionId is stored with another cwd.
const codeSessionConflict fault.Code = "session-conflict"

// conflictDetails are session-conflict's {sessionId, requestedCwd,
// existingCwd?}; existingCwd is left out when the stored session has none.
type conflictDetails struct {
	SessionID    string  `json:"sessionId"`
	RequestedCwd string  `json:"requestedCwd"`
	ExistingCwd  *string `json:"existingCwd,omitempty"`
}

// codeWorkspaceNotFound is the original's workspace-not-found, details
// {workspaceId}.
const codeWorkspaceNotFound fault.Code = "workspace-not-found"

type workspaceDetails struct {
	WorkspaceID string `json:"workspaceId"`
}

// createdValue is session.create's {sessionId}.
type createdValue struct {
	SessionID string `json:"sessionId"`
}

// sessionHistory answers session.history {sessionId, beforeSeq?,
// maxMessages?} with the same message-aligned pages as subagent.history,
// the tail page with the session's projections. It never activates
// anything.
func (h *Handler) sessionHistory(ctx context.Context, c call) (any, *rpcError) {
	p := readPayload(c.payload)
	id := p.sessionID("sessionId")
	beforeSeq := p.optionalInt("beforeSeq", false)
	maxMessages := p.optionalInt("maxMessages", true)
	if bad := invalidPayload(c, p); bad != nil {
		return nil, bad
	}
	transcript, err := h.backend.ReadSession(ctx, id)
	switch {
	case err == nil:
		value := sessionHistoryValue{historyValue: toHistoryValue(paginate(transcript.Events, beforeSeq, pageSize(maxMessages)))}
		if beforeSeq == nil {
			value.Projections = projectionsOf(transcript.Events)
		}
		return value, nil
	case isCancelled(ctx, err):
		return nil, newError(codeCancelled, "session history read was cancelled", nil)
	case errors.Is(err, codeSessionNotFound):
		return nil, sessionNotFound(id)
	case isDamagedLog(err):
		h.logFailure("session.history", err)
		return nil, damagedLogError(id, err, beforeSeq, pageSize(maxMessages))
	default:
		h.logFailure("session.history", err)
		if named, ok := unreadableLog("history unavailable for session "+quote(id), err); ok {
			return nil, named
		}
		return nil, newError(codeInternal, "session history read failed", nil)
	}
}

// sessionPrompt answers session.prompt {sessionId, mode, content} with
// {accepted: true} once the agent's inbox accepted the message. mode is
// 'queue' or 'steer'; this runtime cannot steer a running turn, so both
// deliver content as a follow-up: a FIFO turn of its own after the current
// one. Continuable children are refused with agent-busy; a message the
// session's log cannot take because the disk is full with storage-full; a
// stored log damaged in its middle (which cannot be resumed) with
// session-log-corrupt.
func (h *Handler) sessionPrompt(ctx context.Context, c call) (any, *rpcError) {
	p := readPayload(c.payload)
	if p.fields == nil {
		return nil, invalidPayload(c, p)
	}
	id := p.sessionID("sessionId")
	p.oneOf("mode", "queue", "steer")
	content := p.content("content")
	if bad := invalidPayload(c, p); bad != nil {
		return nil, bad
	}
	_, err := h.backend.PromptSession(ctx, id, content, event.Source{Kind: "user", RPCID: c.rpcID})
	switch {
	case err == nil:
		return acceptedValue{Accepted: true}, nil
	case isCancelled(ctx, err):
		return nil, newError(codeCancelled, "session prompt was cancelled", nil)
	case errors.Is(err, codeSessionNotFound):
		return nil, sessionNotFound(id)
	case errors.Is(err, fault.LeaseHeld):
		return nil, leasedElsewhere(id)
	case errors.Is(err, codeAgentBusy):
		return nil, ownedBySubagentRouting(id)
	case isDiskFull(err):
		h.logFailure("session.prompt", err)
		return nil, storageFull(id, false)
	case isDamagedLog(err):
		h.logFailure("session.prompt", err)
		return nil, damagedPromptError(id, err)
	default:
		h.logFailure("session.prompt", err)
		if named, ok := unreadableLog("resume failed for session "+quote(id), err); ok {
			return nil, named
		}
		return nil, newError(codeInternal, "session prompt failed", nil)
	}
}

// ownedBySubagentRouting is the generic-route ownership fence's agent-busy:
// a continuable child is reached through subagent.* only.
func ownedBySubagentRouting(id string) *rpcError {
	return newError(codeAgentBusy, "session "+quote(id)+" is owned by subagent routing",
		details{Reason: "use subagent delivery for this child session"})
}

// leasedElsewhere is the agent-busy of session.prompt, session.create
// and session.cancel for a session another process runs: it holds the
// session's lease, so this one may neither resume nor stop it until that
// lease is released or expires.
func leasedElsewhere(id string) *rpcError {
	return newError(codeAgentBusy, "session "+quote(id)+" is running in another process",
		details{Reason: "its lease is held by another process; retry once that process releases it or the lease expires"})
}

// sessionNotFound is the original's `session "${sessionId}" not found`.
func sessionNotFound(id string) *rpcError {
	return newError(codeSessionNotFound, "session "+quote(id)+" not found", details{SessionID: id})
}

// acceptedValue is {accepted: true}.
type acceptedValue struct {
	Accepted bool `json:"accepted"`
}

package host

import (
	"context"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/index"
	"github.com/dsh-actors/dsh-actors/internal/jsjson"
	"github.com/dsh-actors/dsh-actors/session"
)

// rpcBackend is everything the host needs from the runtime. The host calls it
// from request goroutines concurrently. Failures are classified with Wrap
// under one of the code* wire codes (matched with errors.Is); any other
// error is reported as internal, and a cancelled ctx always wins as
// cancelled.
type rpcBackend interface {
	// ListSessions returns a summary of every session: the live ones in
	// the order they became live, then the stored ones in the store's
	// listing order (the order session.list keeps for equal updatedAt). It
	// never activates anything.
	ListSessions(ctx context.Context) ([]sessionSummary, error)
	// CreateSession is the original's ensureSession: an error wrapping
	// codeAgentBusy when req.ID is a subagent session, live or stored
	// (checked first); the live agent req.ID when there is one; when
	// req.Requested, a stored session req.ID resumed; otherwise a new live
	// top-level agent on a new session req.ID with cwd req.Cwd (the
	// directory made when missing). A *sessionConflict when the session's
	// cwd is not req.Cwd, live or stored.
	CreateSession(ctx context.Context, req createRequest) (sessionSummary, error)
	// ReadSession returns a session's transcript from memory when it is live,
	// else from storage, without acquiring, publishing or resuming any agent.
	// An unknown id is codeSessionNotFound.
	ReadSession(ctx context.Context, id string) (transcript, error)
	// PromptSession delivers content to the top-level agent id, resuming it
	// from storage when it is not live, and returns the accepted message id.
	// A continuable child is refused with codeAgentBusy; an unknown id is
	// codeSessionNotFound.
	PromptSession(ctx context.Context, id string, content []event.Block, source event.Source) (string, error)
	// CancelSession stops the top-level agent id's running turn and keeps
	// its queued messages, without waiting for the turn to end. A session
	// another process runs is fault.LeaseHeld; any other no agent is live
	// under here (stored, or unknown) is fault.AgentNotFound; either is
	// left as it is. A continuable child, live here or elsewhere, is
	// refused with codeAgentBusy.
	CancelSession(ctx context.Context, id string) error
	// SearchSessions returns one page of the events of stored sessions
	// whose text holds req.Phrase as a literal phrase, best first (the
	// derived index's ranking and snippets, or the unindexed scan's, which
	// answers alike). A phrase or limit out of range is the index's
	// SESSION_QUERY_INVALID_QUERY or SESSION_QUERY_INVALID_LIMIT.
	SearchSessions(ctx context.Context, req index.SearchRequest) (index.Page, error)
	// ListChildren reads the complete direct catalog of parentID (healthy
	// continuable children and diagnostics, in the catalog's order) without
	// touching any agent. An unknown parent is codeSessionNotFound.
	ListChildren(ctx context.Context, parentID string) ([]catalogEntry, error)
	// liveAgent returns the exact live agent registered under id right now.
	LiveAgent(id string) (liveAgent, bool)
	// LiveElsewhere returns agent id as another process on a shared
	// store runs it (its lease's current epoch), false when none holds it
	// live or the store is not shared with a durable inbox. It blocks on
	// the store.
	LiveElsewhere(ctx context.Context, id string) (liveAgent, bool, error)
	// Followup asks the continuation service to deliver content to childID
	// on behalf of the exact live parent, cold-resuming the child when it
	// has no Activation, and returns the message id its inbox accepted;
	// for a parent live elsewhere (LiveElsewhere) it commits the message
	// to the child's durable inbox from that parent's epoch (the store
	// checks it), which wakes whichever process runs the child.
	// Failures: codeSubagentNotResumable, codeSubagentUnauthorized,
	// codeSubagentNotDelivered, codeCancelled.
	Followup(ctx context.Context, parent liveAgent, childID string, content []event.Block, source event.Source) (string, error)
	// Subscribe calls fn for every Notice, in the order the runtime produced
	// them, until cancel is called. fn must not block.
	Subscribe(fn func(notice)) (cancel func())
}

// createRequest is one session.create as the handler resolved it.
type createRequest struct {
	ID        string // the requested sessionId, else session-<uuid>
	Cwd       string // the requested cwd, else Options.Cwd
	Requested bool   // ID was requested: a stored session under it is adopted
}

// sessionConflict is the original's SessionCwdConflict: a requested
// sessionId is stored with another cwd (or none: HasExisting false).
type sessionConflict struct {
	SessionID    string
	RequestedCwd string
	ExistingCwd  string
	HasExisting  bool
}

// Error is the original's message: `session "<id>" already exists with cwd
// ${JSON.stringify(existingCwd)}; requested ${JSON.stringify(requestedCwd)}`.
func (e *sessionConflict) Error() string {
	existing := "undefined"
	if e.HasExisting {
		existing = jsonString(e.ExistingCwd)
	}
	return "session " + quote(e.SessionID) + " already exists with cwd " + existing + "; requested " + jsonString(e.RequestedCwd)
}

// jsonString is JSON.stringify of s.
func jsonString(s string) string {
	b, err := jsjson.Marshal(s)
	if err != nil {
		return quote(s)
	}
	return string(b)
}

// liveAgent is one exact live agent (one incarnation) as the rpcBackend found it.
type liveAgent interface {
	// SessionID is the id of the agent's session.
	SessionID() string
}

// sessionSummary is one row of session.list.
type sessionSummary struct {
	ID        string
	CreatedAt int64 // Unix ms
	// UpdatedAt is Unix ms: a live session's last activity (its last
	// event other than a session/end-seed), a stored one's log file mtime
	// (fractional, as Node's mtimeMs), else CreatedAt.
	UpdatedAt       float64
	Running         bool // the session's agent is running a turn now
	Live            bool // the session is live in the runtime
	ParentSessionID string
	Origin          string // "subagent" for continuable children
	Cwd             string
	Title           string // first line of the first user message, if any
	// LastTurn is how the last finished turn ended when it did not
	// complete; nil otherwise, or when it is not known (an unreadable log).
	LastTurn *turnOutcome
	// TitleAsOfSeq is, for a session that is not live, the seq of the
	// last stored event Title was derived with (-1 for an empty log); nil
	// when its log was not read.
	TitleAsOfSeq *int64
}

// transcript is a session's header facts and raw events in seq order.
type transcript struct {
	ParentSessionID string
	Events          []session.Event
}

// catalogKind tells a healthy catalog row from a diagnostic one.
type catalogKind string

// The catalog row kinds.
const (
	kindChild      catalogKind = "child"
	kindDiagnostic catalogKind = "diagnostic"
)

// catalogEntry is one row of a parent's direct continuable catalog.
type catalogEntry struct {
	Kind    catalogKind
	ID      string
	Label   string // healthy rows
	Running bool   // healthy rows: the child session is live now
	Reason  string // diagnostic rows: corrupt | unsupported | unavailable
}

// noticeKind names a Notice.
type noticeKind int

// The notices an rpcBackend publishes.
const (
	// sessionAdded: a session became live (created or resumed).
	sessionAdded noticeKind = iota + 1
	// sessionStatus: a live agent's running status changed.
	sessionStatus
	// sessionRemoved: a live session was released (not deleted).
	sessionRemoved
	// sessionEvent: an event was appended to a live session.
	sessionEvent
	// queueEnqueued: a live agent's inbox accepted Message (id MessageID).
	queueEnqueued
	// queueLeft: the message MessageID left a live agent's inbox, claimed
	// by a turn or discarded (More: another discard of the same cancel
	// follows).
	queueLeft
)

// notice is one change in the runtime that the host turns into a frame.
type notice struct {
	Kind            noticeKind
	SessionID       string
	ParentSessionID string            // sessionAdded
	Cwd             string            // sessionAdded
	Blank           bool              // sessionAdded: no turn/start yet (the original's sessionBlank)
	Running         bool              // sessionStatus
	Event           session.Event     // sessionEvent
	MessageID       string            // queueEnqueued, queueLeft
	Message         event.UserMessage // queueEnqueued (its Content not to be modified)
	More            bool              // queueLeft
}

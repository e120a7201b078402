package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/index"
	"github.com/dsh-actors/dsh-actors/session"
)

// runtimeBackend is the rpcBackend over a running *dsh.Runtime: its
// session operations (create, prompt, cancel, follow-up) and its reads
// (sessions, histories, search, catalog), which never activate an agent.
type runtimeBackend struct {
	dsh      *dsh.Runtime
	attached *attachedSessions
}

// newRuntimeBackend adapts rt. It never closes rt.
func newRuntimeBackend(rt *dsh.Runtime) *runtimeBackend {
	return &runtimeBackend{dsh: rt, attached: newAttachedSessions()}
}

// close releases nothing: the backend holds no resource of its own.
func (b *runtimeBackend) close() {}

// ListSessions is the runtime's Sessions: the live sessions in the order
// they became live, then the stored ones that are not live in the store's
// listing order (the original's ctx.sessions.list() then
// persistence.list()), each with its updatedAt, title and last turn. A
// store that cannot be listed is an *unreadableSession naming the cause.
func (b *runtimeBackend) ListSessions(ctx context.Context) ([]sessionSummary, error) {
	sessions, err := b.dsh.Sessions(ctx)
	switch {
	case err == nil:
	case ctx.Err() == nil && errors.Is(err, fault.QueryPersistenceFailed):
		return nil, &unreadableSession{err: cmp.Or(errors.Unwrap(err), err)}
	default:
		return nil, classify(ctx, err)
	}
	summaries := make([]sessionSummary, len(sessions))
	for i, s := range sessions {
		summaries[i] = summaryOf(s)
	}
	return summaries, nil
}

// unreadableSession is what failed the store's listing in ListSessions.
// session.list names it.
type unreadableSession struct {
	err error
}

func (e *unreadableSession) Error() string {
	return "host: the store cannot be listed: " + e.err.Error()
}

func (e *unreadableSession) Unwrap() error { return e.err }

// summaryOf is s as a session.list row: a session that is not live and
// was read carries the title it had as of a seq.
func summaryOf(s dsh.Session) sessionSummary {
	h := s.Header
	summary := sessionSummary{
		ID: h.ID, CreatedAt: h.CreatedAt, UpdatedAt: unixMillis(s.UpdatedAt), Running: s.Running, Live: s.Live,
		ParentSessionID: h.ParentSession, Origin: h.Origin, Cwd: h.Cwd, Title: s.Title, LastTurn: outcomeOf(s.LastTurnEnd),
	}
	if !s.Live && !s.Unreadable {
		asOf := s.TitleAsOfSeq
		summary.TitleAsOfSeq = &asOf
	}
	return summary
}

// unixMillis is t in fractional Unix milliseconds (Node's mtimeMs).
func unixMillis(t time.Time) float64 {
	return float64(t.Unix())*1e3 + float64(t.Nanosecond())/1e6
}

// CreateSession is the original's ensureSession over the runtime's
// OpenSession: a cwd conflict, live or stored, is a *sessionConflict
// naming the session's cwd.
func (b *runtimeBackend) CreateSession(ctx context.Context, req createRequest) (sessionSummary, error) {
	err := b.dsh.OpenSession(ctx, dsh.SessionSpec{ID: req.ID, Cwd: req.Cwd, Resume: req.Requested})
	if errors.Is(err, fault.CwdConflict) {
		if log, readErr := b.dsh.History(ctx, req.ID); readErr == nil {
			return sessionSummary{}, cwdConflict(req, log.Header.Cwd)
		}
	}
	if err != nil {
		return sessionSummary{}, classify(ctx, err)
	}
	return b.liveSummary(ctx, req.ID)
}

// liveSummary is the session.list row of the session id live here, or,
// when it left meanwhile, of its stored log.
func (b *runtimeBackend) liveSummary(ctx context.Context, id string) (sessionSummary, error) {
	for _, s := range b.dsh.LiveSessions() {
		if s.Header.ID == id {
			return summaryOf(s), nil
		}
	}
	sessions, err := b.dsh.Sessions(ctx)
	if err != nil {
		return sessionSummary{}, classify(ctx, err)
	}
	for _, s := range sessions {
		if s.Header.ID == id {
			return summaryOf(s), nil
		}
	}
	return sessionSummary{}, wrap(codeSessionNotFound, fmt.Errorf("host: session %q is no longer stored", id))
}

// cwdConflict is the original's SessionCwdConflict for req against a
// session whose cwd is existing ("" for none).
func cwdConflict(req createRequest, existing string) *sessionConflict {
	return &sessionConflict{SessionID: req.ID, RequestedCwd: req.Cwd, ExistingCwd: existing, HasExisting: existing != ""}
}

// ReadSession is the runtime's History of id: a live snapshot or one
// store read, never a resume.
func (b *runtimeBackend) ReadSession(ctx context.Context, id string) (transcript, error) {
	log, err := b.dsh.History(ctx, id)
	if err != nil {
		return transcript{}, classify(ctx, err)
	}
	events := make([]session.Event, len(log.Events))
	for i, e := range log.Events {
		events[i] = session.Event(e)
	}
	return transcript{ParentSessionID: log.Header.ParentSession, Events: events}, nil
}

// PromptSession is the runtime's PromptSession, classified.
func (b *runtimeBackend) PromptSession(ctx context.Context, id string, content []event.Block, source event.Source) (string, error) {
	messageID, err := b.dsh.PromptSession(ctx, id, content, source)
	return messageID, classify(ctx, err)
}

// SearchSessions is the runtime's Search: the derived index answers, or
// the logs do (without an index, or when it fails).
func (b *runtimeBackend) SearchSessions(ctx context.Context, req index.SearchRequest) (index.Page, error) {
	page, err := b.dsh.Search(ctx, dsh.SearchRequest{Phrase: req.Phrase, Limit: req.Limit, Offset: req.Offset})
	if err != nil {
		return index.Page{}, classify(ctx, err)
	}
	out := index.Page{More: page.More, Hits: make([]index.Hit, len(page.Hits))}
	for i, h := range page.Hits {
		out.Hits[i] = index.Hit(h)
	}
	return out, nil
}

// ListChildren maps the runtime's catalog of parentID (Children).
func (b *runtimeBackend) ListChildren(ctx context.Context, parentID string) ([]catalogEntry, error) {
	children, err := b.dsh.Children(ctx, parentID)
	if err != nil {
		return nil, classify(ctx, err)
	}
	out := make([]catalogEntry, len(children))
	for i, c := range children {
		out[i] = catalogEntry{Kind: kindChild, ID: c.ID, Label: c.Label, Running: c.Status == "running"}
		if c.Diagnostic != "" {
			out[i] = catalogEntry{Kind: kindDiagnostic, ID: c.ID, Reason: c.Diagnostic}
		}
	}
	return out, nil
}

// runtimeAgent is a runtime's agent handle seen through liveAgent: live
// here, or in another process on a shared store.
type runtimeAgent struct{ handle *dsh.Handle }

func (a runtimeAgent) SessionID() string { return a.handle.ID() }

// LiveAgent is the runtime's exact live agent for id.
func (b *runtimeBackend) LiveAgent(id string) (liveAgent, bool) {
	h, ok := b.dsh.Agent(id)
	if !ok {
		return nil, false
	}
	return runtimeAgent{h}, true
}

// LiveElsewhere is id as another process runs it, from the store's lease,
// when the store tells leases and keeps a durable inbox.
func (b *runtimeBackend) LiveElsewhere(ctx context.Context, id string) (liveAgent, bool, error) {
	h, ok, err := b.dsh.AgentElsewhere(ctx, id)
	if err != nil || !ok {
		return nil, false, classify(ctx, err)
	}
	return runtimeAgent{h}, true, nil
}

// Followup is the runtime's SendFrom from the agent LiveAgent or
// LiveElsewhere found. A refusal because that agent is no longer live, or
// its lease no longer current, is codeSubagentParentUnavailable, not
// codeSubagentUnauthorized.
func (b *runtimeBackend) Followup(ctx context.Context, p liveAgent, childID string, content []event.Block, source event.Source) (string, error) {
	ra, ok := p.(runtimeAgent)
	if !ok {
		return "", errors.New("host: foreign LiveAgent")
	}
	messageID, err := b.dsh.SendFrom(ctx, ra.handle, childID, content, source)
	return messageID, classify(ctx, err)
}

// Subscribe turns the runtime's notices (sessions becoming live, leaving
// and appended to, agent status edges, inbox acceptances, claims and
// discards) into the host's.
func (b *runtimeBackend) Subscribe(fn func(notice)) (cancel func()) {
	return b.dsh.Subscribe(func(n dsh.Notice) {
		b.attached.observe(n)
		if kind, ok := noticeKinds[n.Kind]; ok {
			fn(notice{Kind: kind, SessionID: n.SessionID, ParentSessionID: n.ParentSessionID, Cwd: n.Cwd, Blank: n.Blank,
				Running: n.Running, Event: session.Event(n.Event), MessageID: n.MessageID, Message: n.Message, More: n.More})
		}
	})
}

// noticeKinds are the host's notice kinds of the runtime's.
var noticeKinds = map[dsh.NoticeKind]noticeKind{
	dsh.SessionLive: sessionAdded, dsh.SessionRunning: sessionStatus, dsh.SessionReleased: sessionRemoved,
	dsh.SessionAppended: sessionEvent, dsh.MessageAccepted: queueEnqueued, dsh.MessageLeft: queueLeft,
}

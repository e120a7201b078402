package host

import (
	"context"
	"errors"
	"os"

	"github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/vocab"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/index"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
)

// runtimeBackend is the rpcBackend over a running *dsh.Runtime: its
// session operations (create, prompt, cancel, follow-up) are the
// runtime's; reads go through the session query (live snapshot or
// non-mutating store inspection) and never activate an agent.
type runtimeBackend struct {
	dsh   *dsh.Runtime
	rt    *actors.Runtime
	query *query.Query
	index derivedIndex // nil: stored titles and search read the logs
	facts *factCache
}

// derivedIndex is what the handler reads from the derived index of the
// runtime's store (an *index.DB).
type derivedIndex interface {
	// Search returns one page of the stored events holding req.Phrase.
	Search(ctx context.Context, req index.SearchRequest) (index.Page, error)
	// Titles returns the title of every stored session that has one.
	Titles(ctx context.Context) (map[string]index.Title, error)
}

// newRuntimeBackend adapts rt and its session query; db, when not nil,
// answers search and stored titles. It starts
// observing appends at once (for session.list's updatedAt and title);
// close stops that. It never closes the index.
func newRuntimeBackend(rt *dsh.Runtime, db derivedIndex) *runtimeBackend {
	b := &runtimeBackend{dsh: rt, rt: rt.Actors(), query: rt.Query(), index: db, facts: newFactCache()}
	b.facts.cancel = rt.Subscribe(b.facts.observe)
	return b
}

// close stops observing the session registry.
func (b *runtimeBackend) close() { b.facts.cancel() }

// ListSessions lists the live sessions in the order they became live, then
// the stored ones that are not live in the store's listing order (the
// original's ctx.sessions.list() then persistence.list()), each with its
// updatedAt and title: a live session's from its events, a stored one's
// from the index when there is one (and it answers), else from its log.
func (b *runtimeBackend) ListSessions(ctx context.Context) ([]sessionSummary, error) {
	headers, err := b.headers(ctx)
	if err != nil {
		return nil, err
	}
	titles, err := b.storedTitles(ctx)
	if err != nil {
		return nil, err
	}
	summaries := make([]sessionSummary, 0, len(headers))
	for _, h := range headers {
		s, err := b.listedSummary(ctx, h, titles)
		if err != nil && ctx.Err() == nil {
			return nil, &unreadableSession{id: h.ID, err: err}
		} else if err != nil {
			return nil, err
		}
		summaries = append(summaries, s)
	}
	return summaries, nil
}

// unreadableSession is a stored entry ListSessions could not read: the
// session id whose log failed its summary, or (id "") whatever failed the
// store's listing. session.list names it.
type unreadableSession struct {
	id  string
	err error
}

func (e *unreadableSession) Error() string {
	if e.id == "" {
		return "host: the store cannot be listed: " + e.err.Error()
	}
	return "host: session " + quote(e.id) + " cannot be read: " + e.err.Error()
}

func (e *unreadableSession) Unwrap() error { return e.err }

// storedTitles are the index's titles of stored sessions; nil without an
// index, or when the index fails (the logs answer instead, alike). Only a
// cancellation fails.
func (b *runtimeBackend) storedTitles(ctx context.Context) (map[string]index.Title, error) {
	if b.index == nil {
		return nil, nil
	}
	titles, err := b.index.Titles(ctx)
	if err != nil && ctx.Err() != nil {
		return nil, classify(ctx, err)
	}
	return titles, nil
}

// listedSummary is h's summary in session.list: a session that is not
// live carries the title it had as of a seq, from titles when they hold
// it, else from its log.
func (b *runtimeBackend) listedSummary(ctx context.Context, h session.Header, titles map[string]index.Title) (sessionSummary, error) {
	if b.rt.Sessions().Get(h.ID) == nil {
		if title, ok := titles[h.ID]; ok {
			s := b.describe(h, indexedFacts(title))
			s.TitleAsOfSeq = &title.AsOfSeq
			return s, nil
		}
	}
	f, err := b.factsOf(ctx, h)
	if err != nil {
		return sessionSummary{}, err
	}
	s := b.describe(h, f)
	if !s.Live && !f.unread {
		s.TitleAsOfSeq = &f.lastSeq
	}
	return s, nil
}

// headers are the live sessions' headers, then the stored ones not live.
func (b *runtimeBackend) headers(ctx context.Context) ([]session.Header, error) {
	var out []session.Header
	live := map[string]bool{}
	for _, l := range b.rt.Sessions().List() {
		out = append(out, l.Header())
		live[l.ID()] = true
	}
	if store := b.rt.Sessions().Store(); store != nil {
		stored, err := store.List(ctx)
		if err != nil && ctx.Err() == nil {
			return nil, &unreadableSession{err: err}
		} else if err != nil {
			return nil, classify(ctx, err)
		}
		for _, h := range stored {
			if !live[h.ID] {
				out = append(out, h)
			}
		}
	}
	return out, nil
}

func (b *runtimeBackend) summary(ctx context.Context, h session.Header) (sessionSummary, error) {
	f, err := b.factsOf(ctx, h)
	if err != nil {
		return sessionSummary{}, err
	}
	return b.describe(h, f), nil
}

// factsOf are h's facts, its events read once per process (of a damaged
// log, the events before the damage).
func (b *runtimeBackend) factsOf(ctx context.Context, h session.Header) (sessionFacts, error) {
	f, err := b.facts.get(h.ID, func() ([]session.Event, error) {
		log, err := b.query.ReadSession(ctx, h.ID)
		if readable, _, ok := session.ReadablePrefix(err); ok {
			return readable, nil
		}
		if err != nil {
			return nil, err
		}
		return log.Events, nil
	})
	return f, classify(ctx, err)
}

// describe is h's summary now, titled from f.
func (b *runtimeBackend) describe(h session.Header, f sessionFacts) sessionSummary {
	handle, live := b.rt.Registry().Get(h.ID), b.rt.Sessions().Get(h.ID)
	s := sessionSummary{
		ID: h.ID, CreatedAt: h.CreatedAt, UpdatedAt: b.updatedAt(h, live),
		Running: handle != nil && handle.Activation().Status() == inbox.Running, Live: live != nil,
		ParentSessionID: h.ParentSession, Origin: h.Origin, Cwd: h.Cwd, Title: f.title, LastTurn: f.lastTurn,
	}
	if live != nil {
		s.LastTurn = lastTurnOf(live.Events())
	}
	return s
}

// updatedAt is the original's: for a live session the time of its last
// event other than a session/end-seed (picking a session up is not
// activity), for a stored one its log file's mtime in fractional ms (Node's
// mtimeMs), else the header's createdAt.
func (b *runtimeBackend) updatedAt(h session.Header, live *session.Live) float64 {
	if live != nil {
		events := live.Events()
		for i := len(events) - 1; i >= 0; i-- {
			if events[i].Type != vocab.TypeSessionEndSeed {
				return float64(events[i].Time)
			}
		}
		return float64(h.CreatedAt)
	}
	if mtime, ok := b.logMTime(h); ok {
		return mtime
	}
	return float64(h.CreatedAt)
}

// logMTime is the mtime of h's log file as Node's fs.Stats.mtimeMs, when
// the store keeps logs in files under a root (the JSONL store).
func (b *runtimeBackend) logMTime(h session.Header) (float64, bool) {
	store, ok := b.rt.Sessions().Store().(interface{ Root() string })
	if !ok {
		return 0, false
	}
	path, err := logpath.Path(store.Root(), h.Cwd, h.ID)
	if err != nil {
		return 0, false
	}
	info, err := os.Stat(path)
	if err != nil {
		return 0, false // the log vanished since the listing: createdAt stands in
	}
	mtime := info.ModTime()
	return float64(mtime.Unix())*1e3 + float64(mtime.Nanosecond())/1e6, true
}

// CreateSession is the original's ensureSession over the runtime's
// OpenSession: a cwd conflict, live or stored, is a *sessionConflict
// naming the session's cwd.
func (b *runtimeBackend) CreateSession(ctx context.Context, req createRequest) (sessionSummary, error) {
	err := b.dsh.OpenSession(ctx, dsh.SessionSpec{ID: req.ID, Cwd: req.Cwd, Resume: req.Requested})
	log, readErr := b.query.ReadSession(ctx, req.ID)
	switch {
	case errors.Is(err, fault.CwdConflict) && readErr == nil:
		return sessionSummary{}, cwdConflict(req, log.Header.Cwd)
	case err != nil:
		return sessionSummary{}, classify(ctx, err)
	case readErr != nil:
		return sessionSummary{}, classify(ctx, readErr)
	}
	return b.summary(ctx, log.Header)
}

// cwdConflict is the original's SessionCwdConflict for req against a
// session whose cwd is existing ("" for none).
func cwdConflict(req createRequest, existing string) *sessionConflict {
	return &sessionConflict{SessionID: req.ID, RequestedCwd: req.Cwd, ExistingCwd: existing, HasExisting: existing != ""}
}

// ReadSession reads id through the query: a live snapshot or one store
// inspection, never a resume.
func (b *runtimeBackend) ReadSession(ctx context.Context, id string) (transcript, error) {
	log, err := b.query.ReadSession(ctx, id)
	if err != nil {
		return transcript{}, classify(ctx, err)
	}
	return transcript{ParentSessionID: log.Header.ParentSession, Events: log.Events}, nil
}

// PromptSession is the runtime's PromptSession, classified.
func (b *runtimeBackend) PromptSession(ctx context.Context, id string, content []event.Block, source event.Source) (string, error) {
	messageID, err := b.dsh.PromptSession(ctx, id, content, source)
	return messageID, classify(ctx, err)
}

// SearchSessions answers a search from the derived index, or from the
// logs without one. An index that fails (a full disk, a damaged file)
// never fails the search: the failure is logged at Warn, naming its
// cause, and the logs answer; only the request's own refusals and a
// cancellation come from the index.
func (b *runtimeBackend) SearchSessions(ctx context.Context, req index.SearchRequest) (index.Page, error) {
	store := b.rt.Sessions().Store()
	if b.index != nil {
		page, err := b.index.Search(ctx, req)
		if err == nil || ctx.Err() != nil || store == nil || isAny(err, fault.QueryInvalidQuery, fault.QueryInvalidLimit) {
			return page, classify(ctx, err)
		}
		b.rt.Logger().Warn("host: the derived index failed a search; the logs answer it", "err", err)
	}
	if store == nil {
		return index.Page{}, nil
	}
	page, err := index.ScanSearch(ctx, store, req)
	return page, classify(ctx, err)
}

// ListChildren maps the runtime's catalog of parentID (Children).
func (b *runtimeBackend) ListChildren(ctx context.Context, parentID string) ([]catalogEntry, error) {
	children, err := b.dsh.Children(ctx, parentID)
	if err != nil {
		return nil, classify(ctx, err)
	}
	out := make([]catalogEntry, len(children))
	for i, c := range children {
		out[i] = catalogEntry{Kind: kindChild, ID: c.ID, Label: c.Label, Running: c.Status == query.StatusRunning}
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

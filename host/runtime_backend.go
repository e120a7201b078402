package host

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"slices"
	"sync"
	"syscall"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/subagent"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/durable"
	"github.com/dsh-actors/dsh-actors/internal/index"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
)

// continuations is the part of the subagent service the runtime backend
// uses; *subagent.Service implements it.
type continuations interface {
	// ListChildren is the durable direct catalog of parentID.
	ListChildren(ctx context.Context, parentID string) ([]query.Entry, error)
	// Followup delivers content to childID on behalf of the exact live
	// parent and returns the accepted message id.
	Followup(ctx context.Context, parent *parent.Handle, childID string, content []event.Block, source event.Source) (string, error)
}

// runtimeBackend is the rpcBackend over a running actors.Runtime, its session
// query and the continuation service. Reads go through the query (live
// snapshot or non-mutating store inspection) and never activate an agent.
type runtimeBackend struct {
	rt    *actors.Runtime
	cont  continuations
	query *query.Query
	index derivedIndex // nil: stored titles and search read the logs
	facts *factCache
	// prompts serializes, per top-level session, a prompt's admission and
	// delivery with a resume's replay of the durable inbox, so that no
	// prompt is handed to the agent twice.
	prompts stripedLock
	// fullLogs holds the top-level sessions whose log a full disk failed
	// (they left the process): a prompt resumes one only once the store's
	// disk has room again (roomOnDisk; nil: diskHasRoom).
	fullLogs   sync.Map
	roomOnDisk func() bool
}

// stripedLock is a fixed set of mutexes picked by a hash of an id.
type stripedLock [64]sync.Mutex

// lock locks id's stripe and returns its unlock.
func (l *stripedLock) lock(id string) (unlock func()) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	m := &l[h.Sum32()%uint32(len(l))]
	m.Lock()
	return m.Unlock
}

// derivedIndex is what the handler reads from the derived index of the
// runtime's store (an *index.DB).
type derivedIndex interface {
	// Search returns one page of the stored events holding req.Phrase.
	Search(ctx context.Context, req index.SearchRequest) (index.Page, error)
	// Titles returns the title of every stored session that has one.
	Titles(ctx context.Context) (map[string]index.Title, error)
	// ListChildren is the durable direct catalog of parentID, as the
	// unindexed reader answers it.
	ListChildren(ctx context.Context, parentID string) ([]query.Entry, error)
}

// indexedCatalog is the subagent service with its catalog answered by the
// derived index.
type indexedCatalog struct {
	*subagent.Service
	index derivedIndex
}

// ListChildren lists parentID's children from the index.
func (c indexedCatalog) ListChildren(ctx context.Context, parentID string) ([]query.Entry, error) {
	return c.ListChildrenFrom(ctx, c.index, parentID)
}

// newRuntimeBackend adapts rt, its continuation service and a query over
// rt.Sessions(); db, when not nil, answers search and stored titles. It
// starts observing appends at once (for session.list's updatedAt and
// title); close stops that. It never closes the index.
func newRuntimeBackend(rt *actors.Runtime, cont continuations, q *query.Query, db derivedIndex) *runtimeBackend {
	b := &runtimeBackend{rt: rt, cont: cont, query: q, index: db, facts: newFactCache()}
	b.facts.cancel = rt.Sessions().Subscribe(b.facts.observe)
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

// CreateSession is the original's ensureSession over the runtime: the
// agent ensureAgent finds, resumes or starts, whose cwd must be req.Cwd
// (else a *sessionConflict, for a live agent too).
func (b *runtimeBackend) CreateSession(ctx context.Context, req createRequest) (sessionSummary, error) {
	h, err := b.ensureAgent(ctx, req)
	if err != nil {
		return sessionSummary{}, err
	}
	if cwd := h.Header().Cwd; cwd != req.Cwd {
		return sessionSummary{}, cwdConflict(req, cwd)
	}
	return b.summary(ctx, h.Header())
}

// ensureAgent is, after the ownership fence (refuseLiveChild, refuseChild,
// also on an agent a concurrent caller made live first): the live agent
// req.ID, else (req.Requested) the stored session resumed when its cwd
// matches or a *sessionConflict, else a new top-level agent (the runtime's
// default agent) under req.ID with cwd req.Cwd, its directory made first.
func (b *runtimeBackend) ensureAgent(ctx context.Context, req createRequest) (*parent.Handle, error) {
	if h := b.rt.Registry().Get(req.ID); h != nil {
		return h, b.refuseLiveChild(h)
	}
	if req.Requested {
		log, err := b.query.ReadSession(ctx, req.ID)
		switch {
		case err == nil:
			if err := refuseChild(log.Header, log.Events); err != nil {
				return nil, err // ownership first, whatever the cwd
			}
			if stored := log.Header.Cwd; stored != req.Cwd {
				return nil, cwdConflict(req, stored)
			}
			unlock := b.prompts.lock(req.ID)
			defer unlock()
			h, err := b.resumeTopLevel(ctx, req.ID)
			return b.joinedAgent(ctx, req.ID, h, err)
		case !isAny(err, fault.QuerySessionNotFound, session.ErrNotFound):
			return nil, classify(ctx, err)
		}
	}
	if err := os.MkdirAll(req.Cwd, 0o755); err != nil {
		return nil, fmt.Errorf("failed to ensure project directory %q: %w", req.Cwd, err)
	}
	h, err := b.rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: req.ID, Cwd: req.Cwd}})
	return b.joinedAgent(ctx, req.ID, h, err)
}

// joinedAgent is joinLive's agent, classified and fenced.
func (b *runtimeBackend) joinedAgent(ctx context.Context, id string, h *parent.Handle, err error) (*parent.Handle, error) {
	h, err = b.joinLive(id, h, err)
	if err != nil {
		return nil, classify(ctx, err)
	}
	return h, b.refuseLiveChild(h)
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

// PromptSession delivers to the top-level agent id, resuming it from its
// stored log when it is not live. Sessions with a parent are refused. An
// agent whose log failed (a full disk) refuses the message and is
// disposed, so that a later prompt resumes it from what its log holds.
func (b *runtimeBackend) PromptSession(ctx context.Context, id string, content []event.Block, source event.Source) (string, error) {
	unlock := b.prompts.lock(id)
	defer unlock()
	if err := b.awaitRoom(id); err != nil {
		return "", err
	}
	h, err := b.topLevelAgent(ctx, id)
	if err != nil {
		return "", err
	}
	if err := b.requireLease(ctx, h); err != nil {
		return "", classify(ctx, err)
	}
	msg := event.UserMessage{Content: content, Source: source, Role: event.RoleUser, ID: inbox.NewMessageID()}
	in, durable := b.topLevelInbox()
	if durable {
		err = admitTopLevel(ctx, in, id, msg)
	}
	if err == nil {
		if _, err = h.Post(ctx, msg); err != nil && durable { // refused: it must not run at the next resume either
			_ = in.Discard(ctx, id, h.Session().Epoch(), []string{msg.ID})
		}
	}
	if failure := h.Session().WriteFailure(); err != nil && failure != nil {
		_ = h.Dispose(ctx) // its release fails with the log's error, and it leaves the registry all the same
		if isDiskFull(failure) {
			b.fullLogs.Store(id, struct{}{})
		}
	}
	return msg.ID, classify(ctx, err)
}

// awaitRoom refuses (ENOSPC) a prompt to a session whose log a full disk
// failed while the store's disk still has no room, so that nothing is
// acknowledged that the resumed log could not take; once it has room the
// session may be resumed again.
func (b *runtimeBackend) awaitRoom(id string) error {
	if _, full := b.fullLogs.Load(id); !full {
		return nil
	}
	room := b.roomOnDisk
	if room == nil {
		room = func() bool { return diskHasRoom(b.rt.Sessions().Store()) }
	}
	if !room() {
		return fmt.Errorf(`host: session "%s": the disk of its log is still full: %w`, id, syscall.ENOSPC)
	}
	b.fullLogs.Delete(id)
	return nil
}

// topLevelInbox is the durable inbox prompts to top-level agents are
// committed to before they are acknowledged: a JSONL store's in its
// durable admission mode.
func (b *runtimeBackend) topLevelInbox() (session.DurableInbox, bool) {
	store, ok := b.rt.Sessions().Store().(*session.JSONL)
	if !ok {
		return nil, false
	}
	return store.DurableInbox()
}

// admitTopLevel commits msg to the durable inbox of the top-level
// session id (From ""): a crash after the acknowledgement leaves it
// pending, and the next resume runs it (replayPending).
func admitTopLevel(ctx context.Context, in session.DurableInbox, id string, msg event.UserMessage) error {
	body, err := vocab.Encode(msg)
	if err == nil {
		_, err = in.Admit(ctx, id, session.Admission{MessageID: msg.ID, Body: body})
	}
	return err
}

// resumeTopLevel resumes the stored top-level session id and, when its
// store admits prompts durably, hands the agent every prompt its inbox
// holds unrun (acknowledged before a crash or a stop), oldest first,
// before anything newer. A resume that loses to a concurrent one joins
// the agent that won, which replayed them.
func (b *runtimeBackend) resumeTopLevel(ctx context.Context, id string) (*parent.Handle, error) {
	h, err := b.rt.ResumeAgent(ctx, id, parent.Spec{})
	if err != nil {
		return b.joinLive(id, h, err)
	}
	in, ok := b.topLevelInbox()
	if !ok {
		return h, nil
	}
	pending, err := in.Pending(ctx, id)
	for _, p := range pending {
		var msg event.UserMessage
		if msg, err = vocab.DecodeAs[event.UserMessage](vocab.TypeUserMessage, p.Body); err != nil {
			break
		}
		if _, err = h.Post(ctx, msg); err != nil {
			break
		}
	}
	return h, err
}

// leaseChecker is a store whose leases can be lost while held (a holder
// paused past its TTL, then taken over) that tells whether one is still
// current: the Postgres store.
type leaseChecker interface {
	// LeaseCurrent reports whether epoch is id's current lease, held and
	// not expired on the store's clock. It blocks on the store.
	LeaseCurrent(ctx context.Context, id string, epoch int64) (bool, error)
}

// requireLease refuses (fault.LeaseHeld) to accept for h when its
// session's lease is no longer the current one: this process was paused
// past the lease's TTL and another took the session over, so a message
// accepted here could never be logged. A store whose leases cannot be lost
// while held (the JSONL store's) is not asked.
func (b *runtimeBackend) requireLease(ctx context.Context, h *parent.Handle) error {
	leases, ok := b.rt.Sessions().Store().(leaseChecker)
	if !ok {
		return nil
	}
	current, err := leases.LeaseCurrent(ctx, h.ID(), int64(h.Session().Epoch()))
	if err != nil || current {
		return err
	}
	return durable.LeaseHeld(h.ID(), "another process (this one's lease was taken over)")
}

// topLevelAgent returns the live agent id, resuming it when needed; a
// concurrent resume of the same id is joined.
func (b *runtimeBackend) topLevelAgent(ctx context.Context, id string) (*parent.Handle, error) {
	if h := b.rt.Registry().Get(id); h != nil {
		return h, b.refuseLiveChild(h)
	}
	log, err := b.query.ReadSession(ctx, id)
	if err != nil {
		return nil, classify(ctx, err)
	}
	if err := refuseChild(log.Header, log.Events); err != nil {
		return nil, err
	}
	h, err := b.resumeTopLevel(ctx, id)
	return h, classify(ctx, err)
}

// joinLive is the result of a start or resume of id (h, err), except that
// fault.AgentExists, a concurrent one having won, yields the agent now live
// under id.
func (b *runtimeBackend) joinLive(id string, h *parent.Handle, err error) (*parent.Handle, error) {
	if errors.Is(err, fault.AgentExists) {
		if live := b.rt.Registry().Get(id); live != nil {
			return live, nil
		}
	}
	return h, err
}

// refuseLiveChild is refuseChild for a live agent, which is also a
// subagent session while the exact agent that owns it is live under its
// durable parent's id (the original's isOwnedBy: a one-shot child, say).
func (b *runtimeBackend) refuseLiveChild(h *parent.Handle) error {
	header := h.Header()
	if owner := h.Spec().Owner; owner != nil && owner.ID() == header.ParentSession && b.rt.Registry().Get(owner.ID()) == owner {
		return errSubagentSession
	}
	return refuseChild(header, h.Session().Events())
}

// refuseChild is the generic-route ownership fence:
// a session whose header says origin "subagent", or whose own suffix
// (past the fork seed) holds a subagent/descriptor belongs to its continuation owner. A fork merely inheriting an
// ancestor's descriptor in its seed is an ordinary session.
func refuseChild(h session.Header, events []session.Event) error {
	if h.Origin == manager.Origin {
		return errSubagentSession
	}
	own := events[min(seedLength(h), len(events)):]
	if slices.ContainsFunc(own, func(e session.Event) bool { return e.Type == vocab.TypeSubagentDescriptor }) {
		return errSubagentSession
	}
	return nil
}

func seedLength(h session.Header) int {
	if h.SeedLength == nil {
		return 0
	}
	return max(*h.SeedLength, 0)
}

var errSubagentSession = wrap(codeAgentBusy, errors.New("session is owned by subagent routing"))

// SearchSessions searches the stored logs: through the index when there
// is one, else by reading every log (index.ScanSearch); a memory-only
// runtime has no stored session to find.
func (b *runtimeBackend) SearchSessions(ctx context.Context, req index.SearchRequest) (index.Page, error) {
	var page index.Page
	var err error
	switch store := b.rt.Sessions().Store(); {
	case b.index != nil:
		page, err = b.index.Search(ctx, req)
	case store != nil:
		page, err = index.ScanSearch(ctx, store, req)
	}
	return page, classify(ctx, err)
}

// ListChildren maps the continuation service's catalog.
func (b *runtimeBackend) ListChildren(ctx context.Context, parentID string) ([]catalogEntry, error) {
	entries, err := b.cont.ListChildren(ctx, parentID)
	if err != nil {
		return nil, classify(ctx, err)
	}
	out := make([]catalogEntry, len(entries))
	for i, e := range entries {
		out[i] = catalogEntry{Kind: catalogKind(e.Kind), ID: e.ID, Label: e.Label,
			Running: e.Status == query.StatusRunning, Reason: e.Reason}
	}
	return out, nil
}

// runtimeAgent is a live parent.Handle seen through liveAgent.
type runtimeAgent struct{ handle *parent.Handle }

func (a runtimeAgent) SessionID() string { return a.handle.ID() }

// liveAgent is the registry's exact live agent for id.
func (b *runtimeBackend) LiveAgent(id string) (liveAgent, bool) {
	h := b.rt.Registry().Get(id)
	if h == nil {
		return nil, false
	}
	return runtimeAgent{h}, true
}

// remoteAgent is an agent another process runs on a shared store: its id
// and the epoch of its live lease.
type remoteAgent struct {
	id    string
	epoch session.Epoch
}

func (a remoteAgent) SessionID() string { return a.id }

// liveEpochs is a shared store that tells the epoch of a live lease: the
// Postgres store.
type liveEpochs interface {
	// LiveEpoch returns id's lease epoch while a process holds it live.
	// It blocks on the store.
	LiveEpoch(ctx context.Context, id string) (int64, bool, error)
}

// LiveElsewhere is id as another process runs it, from the store's lease,
// when the store tells leases and keeps a durable inbox.
func (b *runtimeBackend) LiveElsewhere(ctx context.Context, id string) (liveAgent, bool, error) {
	store := b.rt.Sessions().Store()
	leases, ok := store.(liveEpochs)
	if _, admits := session.InboxOf(store); !ok || !admits {
		return nil, false, nil
	}
	epoch, live, err := leases.LiveEpoch(ctx, id)
	if err != nil || !live {
		return nil, false, classify(ctx, err)
	}
	return remoteAgent{id: id, epoch: session.Epoch(epoch)}, true, nil
}

// admitFrom commits content to childID's durable inbox from the parent p
// runs elsewhere, under its lease's epoch: the store checks in that step
// that p is the child's parent, that the epoch is its live lease and that
// no drain closed admission, and the commit wakes whichever process runs
// (or takes over) the child.
func (b *runtimeBackend) admitFrom(ctx context.Context, p remoteAgent, childID string, content []event.Block, source event.Source) (string, error) {
	in, ok := session.InboxOf(b.rt.Sessions().Store())
	if !ok {
		return "", wrap(codeSubagentParentUnavailable, errors.New("host: the store keeps no durable inbox"))
	}
	msg := event.UserMessage{Content: content, Source: source, Role: event.RoleUser, ID: inbox.NewMessageID()}
	body, err := vocab.Encode(msg)
	if err != nil {
		return "", err
	}
	_, err = in.Admit(ctx, childID, session.Admission{MessageID: msg.ID, From: p.id, FromEpoch: p.epoch, Body: body})
	if err != nil {
		return "", classify(ctx, err)
	}
	return msg.ID, nil
}

// Followup hands the delivery to the continuation service with the exact
// parent handle found by liveAgent, or for a parent live elsewhere
// (LiveElsewhere) commits it to the child's durable inbox (admitFrom). A refusal because that handle is no
// longer live, or its lease no longer current, is
// codeSubagentParentUnavailable, not codeSubagentUnauthorized.
func (b *runtimeBackend) Followup(ctx context.Context, p liveAgent, childID string, content []event.Block, source event.Source) (string, error) {
	if remote, ok := p.(remoteAgent); ok {
		return b.admitFrom(ctx, remote, childID, content, source)
	}
	ra, ok := p.(runtimeAgent)
	if !ok {
		return "", errors.New("host: foreign LiveAgent")
	}
	messageID, err := b.cont.Followup(ctx, ra.handle, childID, content, source)
	if errors.Is(err, fault.Unauthorized) && !b.rt.Registry().IsLive(ra.handle) {
		// The parent left this process meanwhile (its lease was taken
		// over, say): it is no live parent, whatever the child's header says.
		return "", wrap(codeSubagentParentUnavailable, err)
	}
	return messageID, classify(ctx, err)
}

// Subscribe turns session registry changes, agent status edges and inbox
// acceptances, claims and discards into Notices.
func (b *runtimeBackend) Subscribe(fn func(notice)) (cancel func()) {
	sessions := b.rt.Sessions()
	stopSessions := sessions.Subscribe(func(c session.Change) {
		if n, ok := noticeOfChange(sessions, c); ok {
			fn(n)
		}
	})
	stopAgents := b.rt.Registry().Subscribe(func(e parent.Event) {
		switch e.Type {
		case inbox.StatusChange:
			fn(notice{Kind: sessionStatus, SessionID: e.AgentID, Running: e.Status == inbox.Running})
		case inbox.Enqueue:
			fn(notice{Kind: queueEnqueued, SessionID: e.AgentID, MessageID: e.MessageID, Message: e.Message})
		case inbox.Dequeue, inbox.Discard:
			fn(notice{Kind: queueLeft, SessionID: e.AgentID, MessageID: e.MessageID, More: e.More})
		}
	})
	var once sync.Once
	return func() { once.Do(func() { stopSessions(); stopAgents() }) }
}

func noticeOfChange(sessions *session.Sessions, c session.Change) (notice, bool) {
	id := c.Header.ID
	switch c.Kind {
	case session.Added:
		live := sessions.Get(id)
		return notice{Kind: sessionAdded, SessionID: id, ParentSessionID: c.Header.ParentSession,
			Cwd: c.Header.Cwd, Blank: live == nil || sessionBlank(live.Events())}, true
	case session.Removed:
		return notice{Kind: sessionRemoved, SessionID: id}, true
	case session.Appended:
		return notice{Kind: sessionEvent, SessionID: id, Event: c.Event}, true
	}
	return notice{}, false
}

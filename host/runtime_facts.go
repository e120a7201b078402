package host

import (
	"context"
	"errors"
	"sync"

	"github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/vocab"

	"github.com/dsh-actors/dsh-actors/internal/index"
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

// sessionFacts are the session.list facts derived from a log.
type sessionFacts struct {
	title        string
	lastSeq      int64  // the seq of the last event seen, -1 for none
	complete     bool   // filled from a whole log
	unread       bool   // complete, but the log could not be read
	pendingTitle string // a first user message seen before the fill
	lastTurn     *turnOutcome
}

// factCache keeps per-session facts current from Appended changes so that
// session.list reads each stored log at most once per process.
type factCache struct {
	mu     sync.Mutex
	facts  map[string]*sessionFacts
	cancel func()
}

func newFactCache() *factCache {
	return &factCache{facts: map[string]*sessionFacts{}}
}

// observe is the session registry listener; it must not block.
func (c *factCache) observe(n dsh.Notice) {
	if n.Kind != dsh.SessionAppended {
		return
	}
	e := session.Event(n.Event)
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.entry(n.SessionID)
	if f.complete {
		f.lastSeq = max(f.lastSeq, e.Seq)
		if t := e.Type; t == vocab.TypeTurnStart || t == vocab.TypeTurnEnd {
			f.lastTurn = lastTurnOf([]session.Event{e})
		}
	}
	if title, ok := index.TitleOf(e); ok {
		if f.complete && f.title == "" {
			f.title = title
		} else if !f.complete && f.pendingTitle == "" {
			f.pendingTitle = title
		}
	}
}

func (c *factCache) entry(id string) *sessionFacts {
	f := c.facts[id]
	if f == nil {
		f = &sessionFacts{}
		c.facts[id] = f
	}
	return f
}

// get returns id's facts, reading its events once when they are not known.
// A read failure leaves the facts empty (the row still lists).
func (c *factCache) get(id string, read func() ([]session.Event, error)) (sessionFacts, error) {
	c.mu.Lock()
	f := c.facts[id]
	if f != nil && f.complete {
		defer c.mu.Unlock()
		return *f, nil
	}
	c.mu.Unlock()
	events, err := read()
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return sessionFacts{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f = c.entry(id)
	c.fill(f, events, err)
	return *f, nil
}

func (c *factCache) fill(f *sessionFacts, events []session.Event, readErr error) {
	if f.complete {
		return
	}
	f.complete, f.unread, f.lastSeq = true, readErr != nil, -1
	f.lastTurn = lastTurnOf(events)
	for _, e := range events {
		f.lastSeq = e.Seq
		if title, ok := index.TitleOf(e); ok && f.title == "" {
			f.title = title
		}
	}
	if f.title == "" {
		f.title = f.pendingTitle
	}
}

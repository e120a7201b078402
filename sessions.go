package dsh

import (
	"context"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/index"
	"github.com/dsh-actors/dsh-actors/session"
)

// Session is one session as Sessions lists it: its header, whether it is
// live in this runtime, and its title, the first line of its first user
// message with text ("" when none), as of the event TitleAsOfSeq (its
// log's last seq when read, -1 for a log without events). Unreadable is
// true for a stored session whose log could not be read at all: its
// title is then unknown.
type Session struct {
	Header       Header
	Live         bool
	Title        string
	TitleAsOfSeq int64
	Unreadable   bool
}

// Sessions lists every session, top-level and child alike (a child's
// Header.ParentSession names its parent): first those live in this
// runtime, in the order they became live, each titled from memory; then
// the stored ones that are not live, in the store's listing order, titled
// through the derived index on a JSONL store folder (unless
// Options.NoIndex) or else by reading each log once (of a log damaged in
// its middle, the events before the damage). It never resumes a session.
// A store that cannot be listed is fault.QueryPersistenceFailed, a closed
// runtime fault.Closed, a done ctx fault.Cancelled. It blocks on the store: its listing, and the
// reads of the logs changed since the index's last use (of every log
// without an index).
func (r *Runtime) Sessions(ctx context.Context) ([]Session, error) {
	if err := r.actors.Err(); err != nil {
		return nil, err
	}
	var out []Session
	live := map[string]bool{}
	for _, l := range r.actors.Sessions().List() {
		out = append(out, titled(Session{Header: headerOf(l.Header()), Live: true}, l.Events()))
		live[l.ID()] = true
	}
	store := r.actors.Sessions().Store()
	if store == nil {
		return out, nil
	}
	headers, err := store.List(ctx)
	if ctx.Err() != nil {
		return nil, cancelled(ctx)
	}
	if err != nil {
		return nil, persistenceFailed("session persistence listing failed", err)
	}
	titles := r.indexedTitles(ctx)
	for _, h := range headers {
		if live[h.ID] {
			continue
		}
		s, err := r.storedSession(ctx, h, titles)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// indexedTitles are the derived index's titles of the stored sessions,
// nil without an index or when it fails (the logs then answer alike).
func (r *Runtime) indexedTitles(ctx context.Context) map[string]index.Title {
	db, err := r.index.open(ctx)
	if db == nil || err != nil {
		return nil
	}
	titles, err := db.Titles(ctx)
	if err != nil {
		return nil
	}
	return titles
}

// storedSession is h's entry, titled from titles when they hold it, else
// from its log; only a cancellation fails.
func (r *Runtime) storedSession(ctx context.Context, h session.Header, titles map[string]index.Title) (Session, error) {
	s := Session{Header: headerOf(h)}
	if t, ok := titles[h.ID]; ok {
		s.Title, s.TitleAsOfSeq = t.Text, t.AsOfSeq
		return s, nil
	}
	log, err := r.query.ReadSession(ctx, h.ID)
	if ctx.Err() != nil {
		return Session{}, cancelled(ctx)
	}
	if readable, _, ok := session.ReadablePrefix(err); ok {
		return titled(s, readable), nil
	}
	if err != nil {
		s.Unreadable, s.TitleAsOfSeq = true, -1
		return s, nil
	}
	return titled(s, log.Events), nil
}

// titled is s with the title events give it, as of their last seq.
func titled(s Session, events []session.Event) Session {
	s.TitleAsOfSeq = -1
	for _, e := range events {
		s.TitleAsOfSeq = e.Seq
		if title, ok := index.TitleOf(e); ok && s.Title == "" {
			s.Title = title
		}
	}
	return s
}

// persistenceFailed is a store failure as the session query reports one:
// fault.QueryPersistenceFailed, its message headed by what failed.
func persistenceFailed(what string, err error) error {
	return fault.New(fault.QueryPersistenceFailed, what+": "+err.Error(), err)
}

// cancelled is a read that ctx ended: fault.Cancelled wrapping its cause.
func cancelled(ctx context.Context) error {
	return fault.New(fault.Cancelled, "dsh: the session listing was cancelled", context.Cause(ctx))
}

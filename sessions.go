package dsh

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/index"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// Session is one session as Sessions lists it: its header, whether it is
// live in this runtime and whether its agent runs now, and its title, the
// first line of its first user message with text ("" when none), as of
// the event TitleAsOfSeq (its log's last seq when read, -1 for a log
// without events). Unreadable is true for a stored session whose log
// could not be read at all: its title and last turn are then unknown.
type Session struct {
	Header Header
	Live   bool
	// Running is true while its agent, live here, runs a turn or holds
	// accepted messages no turn has claimed yet.
	Running      bool
	Title        string
	TitleAsOfSeq int64
	// UpdatedAt is when the session last changed: for a live session the
	// time of its last event other than a session/end-seed (picking a
	// session up again is no activity), for a stored one the modification
	// time of its log file in a JSONL store folder; else its creation time.
	UpdatedAt time.Time
	// LastTurnEnd is the data of the turn/end event that ended its last
	// turn (its reason: completed, aborted, error, …); nil when no turn
	// ended or a turn opened after the last end.
	LastTurnEnd json.RawMessage
	Unreadable  bool
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
	out := r.LiveSessions()
	live := make(map[string]bool, len(out))
	for _, s := range out {
		live[s.Header.ID] = true
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

// LiveSessions lists the sessions live in this runtime now, in the order
// they became live, as Sessions lists them (each titled from memory). It
// does not block: it reads no store.
func (r *Runtime) LiveSessions() []Session {
	lives := r.actors.Sessions().List()
	out := make([]Session, len(lives))
	for i, l := range lives {
		events := l.Events()
		s := titled(Session{Header: headerOf(l.Header()), Live: true, Running: r.running(l.ID())}, events)
		s.UpdatedAt = liveUpdatedAt(l.Header(), events)
		out[i] = s
	}
	return out
}

// running reports whether the agent live under id runs a turn or holds
// accepted messages not yet claimed.
func (r *Runtime) running(id string) bool {
	h := r.actors.Registry().Get(id)
	return h != nil && h.Activation().Status() == inbox.Running
}

// liveUpdatedAt is the time of the last event other than a
// session/end-seed, else the header's creation time.
func liveUpdatedAt(h session.Header, events []session.Event) time.Time {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type != vocab.TypeSessionEndSeed {
			return time.UnixMilli(events[i].Time)
		}
	}
	return time.UnixMilli(h.CreatedAt)
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
	s := Session{Header: headerOf(h), Running: r.running(h.ID), UpdatedAt: r.logModified(h)}
	if t, ok := titles[h.ID]; ok {
		s.Title, s.TitleAsOfSeq, s.LastTurnEnd = t.Text, t.AsOfSeq, t.LastTurnEnd
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

// logModified is the modification time of h's log file, plain or
// Zstandard, when the store keeps its logs in files under a folder (a
// JSONL store), else h's creation time (also for a log that vanished
// since the listing).
func (r *Runtime) logModified(h session.Header) time.Time {
	created := time.UnixMilli(h.CreatedAt)
	store, ok := r.actors.Sessions().Store().(interface{ Root() string })
	if !ok {
		return created
	}
	path, err := logpath.Path(store.Root(), h.Cwd, h.ID)
	if err != nil {
		return created
	}
	for _, name := range []string{path, path + ".zstd"} {
		if info, err := os.Stat(name); err == nil {
			return info.ModTime()
		}
	}
	return created
}

// titled is s with the title and last turn end events give it, as of
// their last seq.
func titled(s Session, events []session.Event) Session {
	s.TitleAsOfSeq = -1
	for _, e := range events {
		s.TitleAsOfSeq = e.Seq
		if title, ok := index.TitleOf(e); ok && s.Title == "" {
			s.Title = title
		}
	}
	s.LastTurnEnd = index.LastTurnEnd(events)
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

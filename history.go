package dsh

import (
	"context"
	"encoding/json"

	"github.com/dsh-actors/dsh-actors/session"
)

// Header is a session's immutable first line: its id, creation time (Unix
// milliseconds), working folder, the session it was started or forked
// from, the length of the seed it inherited (nil when none), its origin
// ("subagent" for a continuable child), its delegation depth and agent
// preset.
type Header struct {
	ID              string
	CreatedAt       int64
	Cwd             string
	ParentSession   string
	SeedLength      *int
	Origin          string
	DelegationDepth int
	AgentPreset     string
}

// Event is one event of a session's log, as the log holds it: its type
// (e.g. "user/message", "turn/end"), seq (from 0, contiguous), time (Unix
// milliseconds) and payload Data as raw JSON; SourceEventSeqs, SurfaceOp
// (raw JSON, nil when absent) and Ignorable as the log line carries them.
type Event struct {
	Type            string
	Seq             int64
	Time            int64
	Data            json.RawMessage
	SourceEventSeqs []int64
	SurfaceOp       json.RawMessage
	Ignorable       bool
}

// MarshalJSON writes e as its log line: {type, seq, time, data} and the
// optional keys, in the log's key order. It does not block.
func (e Event) MarshalJSON() ([]byte, error) { return session.Event(e).MarshalJSON() }

// History is a session's header and its events in seq order.
type History struct {
	Header Header
	Events []Event
}

// History reads the log of the session id without resuming or waking it:
// a snapshot of it when it is live in this runtime, else the stored log's
// valid prefix (a torn last line, normal after a crash, is left out and
// nothing is repaired or written). A log damaged in its middle fails with
// an error naming the file and line from which ReadablePrefix gives the
// events before the damage; an unknown id is fault.QuerySessionNotFound,
// and a log or store that cannot be read fault.QueryPersistenceFailed. It
// blocks on the store read.
func (r *Runtime) History(ctx context.Context, id string) (History, error) {
	log, err := r.query.ReadSession(ctx, id)
	if err != nil {
		return History{}, err
	}
	return History{Header: headerOf(log.Header), Events: eventsOf(log.Events)}, nil
}

// ReadablePrefix returns what History refused for damage in a log's body
// could still read: the events before the damaged line, and that line
// (event lines counted from 1 after the header). ok is false for any other
// error, a damaged header included. It does not block.
func ReadablePrefix(err error) (events []Event, line int, ok bool) {
	readable, line, ok := session.ReadablePrefix(err)
	if !ok {
		return nil, 0, false
	}
	return eventsOf(readable), line, true
}

// headerOf is the store's header as the root's.
func headerOf(h session.Header) Header {
	if h.SeedLength != nil {
		n := *h.SeedLength
		h.SeedLength = &n
	}
	return Header{ID: h.ID, CreatedAt: h.CreatedAt, Cwd: h.Cwd, ParentSession: h.ParentSession, SeedLength: h.SeedLength,
		Origin: h.Origin, DelegationDepth: h.DelegationDepth, AgentPreset: h.AgentPreset}
}

// eventsOf converts the store's events to the root's.
func eventsOf(events []session.Event) []Event {
	out := make([]Event, len(events))
	for i, e := range events {
		out[i] = Event(e)
	}
	return out
}

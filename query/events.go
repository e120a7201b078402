package query

import (
	"context"
	"github.com/dsh-actors/dsh-actors/fault"
	"strconv"

	"github.com/dsh-actors/dsh-actors/session"
)

// Surface says how an event relates to the model-visible surface:
// "current" (a node of the final folded surface), "shadowed" (a node a
// later replacement removed) or "log-only" (never a surface node).
type Surface string

// The three surface classes of an event.
const (
	// surfaceCurrent: a node of the final folded surface.
	surfaceCurrent Surface = "current"
	// surfaceShadowed: a node a later replacement removed.
	surfaceShadowed Surface = "shadowed"
	// surfaceLogOnly: never a surface node (turn boundaries, chunks, the
	// subagent descriptor, ...).
	surfaceLogOnly Surface = "log-only"
)

// EventRecord is one raw event of a session with its surface class.
type EventRecord struct {
	SessionID string  `json:"sessionId"`
	Seq       int64   `json:"seq"`
	Type      string  `json:"type"`
	Time      int64   `json:"time"`
	Surface   Surface `json:"surface"`
}

// readRequest asks for the event at Seq of SessionID with up to Before
// events before it and After events after it (each 0..ReadWindowMax).
// From, when set, is the session's log as listEvents just read it: the
// window is cut from it instead of reading the log again.
type readRequest struct {
	SessionID string
	Seq       int64
	Before    int
	After     int
	From      *session.Log
}

// eventList is listEvents' answer: one record per raw event and the log
// they were folded from, which the catalog's exact read of the same child
// reuses (readRequest.From), so a listing reads each child's log once.
type eventList struct {
	records []EventRecord
	log     *session.Log
}

// eventWindow is the result of readEvent: the session's header, the target
// event and the events of [StartSeq, EndSeq] (the target among them).
type eventWindow struct {
	Session  session.Header
	Target   session.Event
	Events   []session.Event
	StartSeq int64
	EndSeq   int64
}

// ListEvents reads the whole log of id (a live snapshot, or one
// Store.Inspect) and folds its surface, returning one record per raw event
// in seq order. A log that breaks the surface rules is
// SESSION_QUERY_INVALID_SURFACE ("invalid session surface: <msg>"); an
// unknown id is SESSION_QUERY_SESSION_NOT_FOUND; an unreadable stored log is
// SESSION_QUERY_PERSISTENCE_FAILED. The original took no cancellation
// signal here; ctx is honoured before and during the store read.
func (q *Query) ListEvents(ctx context.Context, id string) ([]EventRecord, error) {
	list, err := q.listEvents(ctx, id)
	if err != nil {
		return nil, err
	}
	return list.records, nil
}

// listEvents is ListEvents with the log it read, the Querier's step.
func (q *Query) listEvents(ctx context.Context, id string) (*eventList, error) {
	log, err := q.load(ctx, id)
	if err != nil {
		return nil, err
	}
	return eventsOf(id, log)
}

// eventsOf folds the surface of log, the log of id (ListEvents' records).
func eventsOf(id string, log *session.Log) (*eventList, error) {
	classes, err := foldSurface(log.Events)
	if err != nil {
		return nil, newError(fault.QueryInvalidSurface, "invalid session surface: "+err.Error(), err)
	}
	records := make([]EventRecord, len(log.Events))
	for i, ev := range log.Events {
		records[i] = EventRecord{SessionID: id, Seq: ev.Seq, Type: ev.Type, Time: ev.Time, Surface: classes[i]}
	}
	return &eventList{records: records, log: log}, nil
}

// readEvent validates the window (SESSION_QUERY_INVALID_WINDOW, before any
// I/O), reads the log of req.SessionID like ListEvents but without surface
// validation (or takes req.From, already read), and returns the header with
// the window around req.Seq. A seq with no event is
// SESSION_QUERY_EVENT_NOT_FOUND. A done ctx returns context.Cause(ctx).
func (q *Query) readEvent(ctx context.Context, req readRequest) (*eventWindow, error) {
	if err := validateWindow(req); err != nil {
		return nil, err
	}
	log := req.From
	if log == nil {
		var err error
		if log, err = q.load(ctx, req.SessionID); err != nil {
			return nil, err
		}
	}
	if err := cancelled(ctx); err != nil {
		return nil, err
	}
	return windowOf(log, req)
}

// windowOf is the window req asks for, cut from log (detached from it).
func windowOf(log *session.Log, req readRequest) (*eventWindow, error) {
	n := int64(len(log.Events))
	if req.Seq < 0 || req.Seq >= n || log.Events[req.Seq].Seq != req.Seq {
		return nil, newError(fault.QueryEventNotFound,
			`session "`+req.SessionID+`" has no event at seq `+strconv.FormatInt(req.Seq, 10), nil)
	}
	start, end := max(0, req.Seq-int64(req.Before)), min(n-1, req.Seq+int64(req.After))
	events := make([]session.Event, 0, end-start+1)
	for _, e := range log.Events[start : end+1] {
		events = append(events, cloneEvent(e))
	}
	return &eventWindow{
		Session:  cloneHeader(log.Header),
		Target:   events[req.Seq-start],
		Events:   events,
		StartSeq: start,
		EndSeq:   end,
	}, nil
}

func validateWindow(req readRequest) error {
	for _, side := range []struct {
		name  string
		value int
	}{{"before", req.Before}, {"after", req.After}} {
		if side.value < 0 || side.value > readWindowMax {
			return newError(fault.QueryInvalidWindow,
				side.name+" must be an integer between 0 and "+strconv.Itoa(readWindowMax), nil)
		}
	}
	return nil
}

// ReadSession returns the whole log of id, detached: a live snapshot, or
// one Store.Inspect (the valid stored prefix, never repaired). Unlike
// ListEvents it does not validate the surface, so a log with a malformed
// surface can still be shown. Errors are those of ListEvents' read.
func (q *Query) ReadSession(ctx context.Context, id string) (*session.Log, error) {
	log, err := q.load(ctx, id)
	if err != nil {
		return nil, err
	}
	events := make([]session.Event, len(log.Events))
	for i, e := range log.Events {
		events[i] = cloneEvent(e)
	}
	return &session.Log{Header: cloneHeader(log.Header), Events: events}, nil
}

package query

import (
	"context"
	"errors"

	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/catalog"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// Querier is the session query the catalog reader consumes. *Query
// implements it; tests wrap it to inject failures.
type Querier interface {
	// traceSession returns the lineage of id over the whole corpus.
	traceSession(ctx context.Context, id string) (*lineage, error)
	childReader
}

// childReader is the part of the session query that reads one child.
type childReader interface {
	// listEvents returns every raw event of id with its surface class
	// (Query.ListEvents), and the log it read.
	listEvents(ctx context.Context, id string) (*eventList, error)
	// readEvent returns one event of a session with the session's header.
	readEvent(ctx context.Context, req readRequest) (*eventWindow, error)
}

// Entry kinds, child statuses and diagnostic reasons.
const (
	KindChild      = "child"
	KindDiagnostic = "diagnostic"

	// StatusRunning: the child's session is live in this process.
	StatusRunning = "running"
	// StatusComplete: the child's session exists only in storage. It is not
	// an outcome: a follow-up may start a new turn on it.
	StatusComplete = "complete"

	ReasonCorrupt     = "corrupt"
	ReasonUnsupported = "unsupported"
	reasonUnavailable = "unavailable"
)

// Entry is one row of a listing: a child (ID, Label, Status) or a
// diagnostic (ID, Reason) for a direct child that could not be read.
type Entry struct {
	Kind   string
	ID     string
	Label  string
	Status string
	Reason string
}

// ListChildren lists the direct continuable children of parentID from the
// session query alone: it never creates an agent, never touches
// an activation and never writes storage.
//
// In order: a nil q is SUBAGENT_CONTROL_SESSION_QUERY_UNAVAILABLE (before
// any other check); a traceSession of the parent, whose failure fails the
// whole call with the query's error unchanged (an unknown parent included);
// then, for each direct child in trace order (createdAt, then id), a
// ListEvents and, when the child's own suffix (seq >= seedLength) holds
// exactly one descriptor, an exact readEvent of it. A child without a
// descriptor is omitted; one that cannot be read or validated becomes a
// diagnostic; any other failure fails the whole call. The context is
// checked before and after every query call and after every child: once it
// is done the call fails with CANCELLED ("subagent listing was cancelled"),
// never with a partial list.
func ListChildren(ctx context.Context, q Querier, parentID string) ([]Entry, error) {
	if isNilQuerier(q) {
		return nil, newError(fault.SessionQueryUnavailable,
			"listing subagents requires session query (load a dsh-session-query backend)", nil)
	}
	trace, err := runListingQuery(ctx, func() (*lineage, error) { return q.traceSession(ctx, parentID) })
	if err != nil {
		return nil, err
	}
	entries := []Entry{}
	for _, node := range trace.Descendants {
		entry, err := inspectChild(ctx, q, parentID, node.Session)
		if err != nil {
			return nil, err
		}
		if err := catalog.Checkpoint(ctx); err != nil {
			return nil, err
		}
		if entry != nil {
			entries = append(entries, *entry)
		}
	}
	return entries, nil
}

func isNilQuerier(q Querier) bool {
	if q == nil {
		return true
	}
	concrete, ok := q.(*Query)
	return ok && concrete == nil
}

// runListingQuery runs one query call between two checkpoints. A failure
// seen after ctx is done becomes CANCELLED; otherwise it is returned as is.
func runListingQuery[T any](ctx context.Context, call func() (T, error)) (T, error) {
	var zero T
	if err := catalog.Checkpoint(ctx); err != nil {
		return zero, err
	}
	result, err := call()
	if cpErr := catalog.Checkpoint(ctx); cpErr != nil {
		return zero, cpErr
	}
	return result, err
}

// inspectChild reads one candidate; a nil entry means "omit".
func inspectChild(ctx context.Context, q childReader, parentID string, candidate catalog.Record) (*Entry, error) {
	entry, err := readChildDescriptor(ctx, q, parentID, candidate)
	if err == nil {
		return entry, nil
	}
	if reason, ok := diagnosticReason(err); ok {
		return diagnostic(candidate.Header.ID, reason), nil
	}
	return nil, err
}

func readChildDescriptor(ctx context.Context, q childReader, parentID string, candidate catalog.Record) (*Entry, error) {
	id := candidate.Header.ID
	list, err := runListingQuery(ctx, func() (*eventList, error) { return q.listEvents(ctx, id) })
	if err != nil {
		return nil, err
	}
	seqs := ownDescriptorSeqs(list.records, int64(candidate.Header.OwnStart()))
	switch {
	case len(seqs) == 0:
		return nil, nil
	case len(seqs) > 1:
		return diagnostic(id, ReasonCorrupt), nil
	}
	window, err := runListingQuery(ctx, func() (*eventWindow, error) {
		return q.readEvent(ctx, readRequest{SessionID: id, Seq: seqs[0], From: list.log})
	})
	if err != nil {
		return nil, err
	}
	return childEntry(parentID, candidate, window), nil
}

// ownDescriptorSeqs lists the descriptor events at or after the seed
// boundary: a fork seed's replayed ancestor descriptor does not count.
func ownDescriptorSeqs(records []EventRecord, seedLength int64) []int64 {
	var seqs []int64
	for _, r := range records {
		if r.Type == vocab.TypeSubagentDescriptor && r.Seq >= seedLength {
			seqs = append(seqs, r.Seq)
		}
	}
	return seqs
}

// childEntry checks the exact read against the trace and parses the
// descriptor. The status comes from the trace record, not the read.
func childEntry(parentID string, candidate catalog.Record, window *eventWindow) *Entry {
	id := candidate.Header.ID
	if catalog.CompatibleHeaders(window.Session, candidate.Header) != nil ||
		window.Session.ParentSession != parentID || window.Target.Type != vocab.TypeSubagentDescriptor {
		return diagnostic(id, ReasonCorrupt)
	}
	d, err := descriptor.Parse(window.Target.Data)
	switch {
	case errors.Is(err, fault.DescriptorUnsupported):
		return diagnostic(id, ReasonUnsupported)
	case err != nil:
		return diagnostic(id, ReasonCorrupt)
	}
	status := StatusComplete
	if candidate.Live {
		status = StatusRunning
	}
	return &Entry{Kind: KindChild, ID: id, Label: d.Label, Status: status}
}

// diagnosticReason maps the per-child query failures that become
// diagnostics; every other error (CANCELLED, INVALID_WINDOW, a non-query
// error, ...) fails the whole call.
func diagnosticReason(err error) (string, bool) {
	var qerr *fault.Error
	if !errors.As(err, &qerr) {
		return "", false
	}
	switch qerr.Code {
	case fault.QuerySessionNotFound, fault.QueryEventNotFound, fault.QueryPersistenceFailed:
		return reasonUnavailable, true
	case fault.QueryInvalidSurface, fault.QuerySourceConflict:
		return ReasonCorrupt, true
	}
	return "", false
}

func diagnostic(id, reason string) *Entry {
	return &Entry{Kind: KindDiagnostic, ID: id, Reason: reason}
}

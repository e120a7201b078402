package host

import (
	"encoding/json"

	"github.com/dsh-actors/dsh-actors/session"
)

// wireEvent is a raw session event as the wire carries it.
type wireEvent struct {
	Type            string          `json:"type"`
	Seq             int64           `json:"seq"`
	Time            int64           `json:"time"`
	Data            json.RawMessage `json:"data"`
	SourceEventSeqs []int64         `json:"sourceEventSeqs,omitempty"`
	SurfaceOp       json.RawMessage `json:"surfaceOp,omitempty"`
	Ignorable       bool            `json:"ignorable,omitempty"`
}

func toWireEvent(e session.Event) wireEvent {
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	return wireEvent{
		Type: e.Type, Seq: e.Seq, Time: e.Time, Data: data,
		SourceEventSeqs: e.SourceEventSeqs, SurfaceOp: e.SurfaceOp, Ignorable: e.Ignorable,
	}
}

// historyEntry is {event, view?}; this runtime has no tool presenters, so
// view is always absent and the client renders events generically.
type historyEntry struct {
	Event wireEvent `json:"event"`
}

type historyValue struct {
	Events  []historyEntry `json:"events"`
	HasMore bool           `json:"hasMore"`
}

func toHistoryValue(p page) historyValue {
	entries := make([]historyEntry, len(p.events))
	for i, e := range p.events {
		entries[i] = historyEntry{Event: toWireEvent(e)}
	}
	return historyValue{Events: entries, HasMore: p.hasMore}
}

// wireChild is a healthy subagent.list row: exactly {kind:"child", id, label, activity}, no mode, and
// label always present (a durable label may be empty).
type wireChild struct {
	Kind     catalogKind `json:"kind"`
	ID       string      `json:"id"`
	Label    string      `json:"label"`
	Activity string      `json:"activity"`
}

// wireDiagnostic is a diagnostic subagent.list row {kind:"diagnostic", id, reason}.
type wireDiagnostic struct {
	Kind   catalogKind `json:"kind"`
	ID     string      `json:"id"`
	Reason string      `json:"reason"`
}

// toWireEntry is a wireChild or a wireDiagnostic.
func toWireEntry(e catalogEntry) any {
	if e.Kind == kindDiagnostic {
		return wireDiagnostic{Kind: kindDiagnostic, ID: e.ID, Reason: e.Reason}
	}
	activity := "inactive"
	if e.Running {
		activity = "running"
	}
	return wireChild{Kind: kindChild, ID: e.ID, Label: e.Label, Activity: activity}
}

// encodedCatalog is subagent.list's value {entries, parentAvailable} with
// its entries already encoded (rows, shared read-only by the callers of
// one catalog read): writeResponse splices it in, so no caller re-encodes
// or re-validates a large catalog.
type encodedCatalog struct {
	rows            []byte
	parentAvailable bool
}

// appendPieces appends the bytes jsjson.Marshal writes for the struct
// {Entries []any `json:"entries"`; ParentAvailable bool
// `json:"parentAvailable"`} holding the same rows; rows itself is one piece.
func (v encodedCatalog) appendPieces(dst [][]byte) [][]byte {
	tail := `,"parentAvailable":false}`
	if v.parentAvailable {
		tail = `,"parentAvailable":true}`
	}
	return append(dst, []byte(`{"entries":`), v.rows, []byte(tail))
}

type messageIDValue struct {
	MessageID string `json:"messageId"`
}

package session

import (
	"encoding/json"
	"strconv"

	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

const (
	toolOutcomeUnknownText = "The tool call was interrupted after it was recorded, but no result was durably recorded. " +
		"Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the operation is " +
		"read-only or idempotent; if it may have side effects, first verify external state or ask the user. " +
		"Do not retry blindly."
	toolNotStartedText = "The tool call was interrupted before the Harness recorded it as started. " +
		"Retry it if it is still needed."
)

// pendingCall is a tool call announced by an assistant message and not yet
// answered by a tool/result.
type pendingCall struct {
	id      string
	step    json.RawMessage
	callSeq int64 // -1 until a tool/call records it
}

// openTurn tracks the turn, step and calls left open at the end of a log.
type openTurn struct {
	turn  json.RawMessage // nil when no turn is open
	step  json.RawMessage // nil when no step is open
	calls []pendingCall
}

// turnPayload covers the data fields the tracker reads.
type turnPayload struct {
	Turn    json.RawMessage `json:"turn"`
	Step    json.RawMessage `json:"step"`
	CallID  string          `json:"callId"`
	Message struct {
		Content []struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		} `json:"content"`
		Source struct {
			CallID string `json:"callId"`
		} `json:"source"`
	} `json:"message"`
}

func (o *openTurn) observe(e Event) {
	switch e.Type {
	case vocab.TypeTurnStart, vocab.TypeTurnEnd, vocab.TypeStepStart, vocab.TypeStepEnd, vocab.TypeAssistantMessage, vocab.TypeToolCall, vocab.TypeToolResult:
	default:
		return
	}
	var p turnPayload
	_ = json.Unmarshal(e.Data, &p) // a payload of another shape leaves p zero, as a missing field would
	switch e.Type {
	case vocab.TypeTurnStart:
		*o = openTurn{turn: nonNull(p.Turn)}
	case vocab.TypeTurnEnd:
		*o = openTurn{}
	case vocab.TypeStepStart:
		o.step = nonNull(p.Step)
	case vocab.TypeStepEnd:
		o.step, o.calls = nil, nil
	case vocab.TypeAssistantMessage:
		for _, block := range p.Message.Content {
			if block.Type == "tool-call" {
				o.setPending(block.ID, p.Step)
			}
		}
	case vocab.TypeToolCall:
		o.recordCall(p.CallID, e.Seq)
	case vocab.TypeToolResult:
		o.remove(p.Message.Source.CallID)
	}
}

func nonNull(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return json.RawMessage("null")
	}
	return raw
}

// setPending adds or replaces a call, keeping its first insertion position
// as a JavaScript Map does.
func (o *openTurn) setPending(id string, step json.RawMessage) {
	for i := range o.calls {
		if o.calls[i].id == id {
			o.calls[i] = pendingCall{id: id, step: step, callSeq: -1}
			return
		}
	}
	o.calls = append(o.calls, pendingCall{id: id, step: step, callSeq: -1})
}

func (o *openTurn) recordCall(id string, seq int64) {
	for i := range o.calls {
		if o.calls[i].id == id {
			o.calls[i].callSeq = seq
		}
	}
}

func (o *openTurn) remove(id string) {
	for i := range o.calls {
		if o.calls[i].id == id {
			o.calls = append(o.calls[:i], o.calls[i+1:]...)
			return
		}
	}
}

// interruptedTurnClosers returns the synthetic events that close an open
// final turn: a tool/result per pending call, then
// step/end if a step is open, then turn/end {kind:"interrupted"}; seqs
// continue the log and every time is the last event's time. A balanced log
// gets none.
func interruptedTurnClosers(events []Event) []Event {
	var o openTurn
	for _, e := range events[lastTurnBoundary(events):] {
		o.observe(e)
	}
	if o.turn == nil || len(events) == 0 {
		return nil
	}
	last := events[len(events)-1]
	seq, t := last.Seq+1, last.Time
	var closers []Event
	for _, c := range o.calls {
		closers = append(closers, toolResultCloser(o.turn, c, seq, t))
		seq++
	}
	if o.step != nil {
		data := `{"turn":` + string(o.turn) + `,"step":` + string(o.step) + `}`
		closers = append(closers, Event{Type: vocab.TypeStepEnd, Seq: seq, Time: t, Data: json.RawMessage(data)})
		seq++
	}
	data := `{"turn":` + string(o.turn) + `,"reason":{"kind":"interrupted"}}`
	return append(closers, Event{Type: vocab.TypeTurnEnd, Seq: seq, Time: t, Data: json.RawMessage(data)})
}

// lastTurnBoundary is the index of the last turn/start or turn/end (0 when
// there is none): both reset the tracker, so the events before it cannot
// change the closers, and only the final turn's payloads are decoded.
func lastTurnBoundary(events []Event) int {
	for i := len(events) - 1; i >= 0; i-- {
		if t := events[i].Type; t == vocab.TypeTurnStart || t == vocab.TypeTurnEnd {
			return i
		}
	}
	return 0
}

func toolResultCloser(turn json.RawMessage, c pendingCall, seq, t int64) Event {
	started := c.callSeq >= 0
	text, errName, errCode := toolNotStartedText, "ToolNotStartedError", "TOOL_NOT_STARTED"
	if started {
		text, errName, errCode = toolOutcomeUnknownText, "ToolOutcomeUnknownError", "TOOL_OUTCOME_UNKNOWN"
	}
	step := c.step
	if step == nil {
		step = json.RawMessage("null")
	}
	b := []byte(`{"turn":`)
	b = append(b, turn...)
	b = append(b, `,"step":`...)
	b = append(b, step...)
	b = append(b, `,"message":{"id":`...)
	b = appendJSONString(b, "interrupted-tool-result-"+c.id+"-"+strconv.FormatInt(seq, 10))
	b = append(b, `,"role":"user","source":{"kind":"tool","callId":`...)
	b = appendJSONString(b, c.id)
	b = append(b, `},"content":[{"type":"tool-result","toolCallId":`...)
	b = appendJSONString(b, c.id)
	b = append(b, `,"isError":true,"content":[{"type":"text","text":`...)
	b = appendJSONString(b, text)
	b = append(b, `}]}]},"error":{"name":"`+errName+`","code":"`+errCode+`"}}`...)
	e := Event{Type: vocab.TypeToolResult, Seq: seq, Time: t, Data: b, SurfaceOp: json.RawMessage(`"append"`)}
	if started {
		e.SourceEventSeqs = []int64{c.callSeq}
	}
	return e
}

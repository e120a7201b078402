package storegen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Parent is the id of the session whose children Generate writes.
const Parent = "parent"

// Shape describes a generated store: Sessions logs in all, Children of
// them direct continuable children of Parent (one of the sessions), each
// log holding Turns turns of ten events.
type Shape struct {
	Sessions, Children, Turns int
}

// The event types the generated logs hold.
const (
	typeDescriptor    = "subagent/descriptor"
	typeEndSeed       = "session/end-seed"
	typeTurnStart     = "turn/start"
	typeTurnEnd       = "turn/end"
	typeStepStart     = "step/start"
	typeStepEnd       = "step/end"
	typeUserMessage   = "user/message"
	typeAssistantText = "assistant/message"
	typeChunk         = "assistant/chunk"
	typeToolCall      = "tool/call"
	typeToolResult    = "tool/result"
)

// appendOp is the surfaceOp of a message event that adds to the
// conversation.
var appendOp = json.RawMessage(`"append"`)

// Generate writes a store of the given shape under root and returns the
// bytes written. The other sessions form families of ten (a root with
// nine children, each with a descriptor), so a trace has a realistic
// corpus to sort through. The children are ChildID(0) … ChildID(Children-1),
// labelled "child task i". Parent and its children are always written:
// when Children is not less than Sessions there are no other sessions
// (and Children+1 logs in all). It blocks until every log is written.
func Generate(root string, shape Shape) (int64, error) {
	cwds := []string{"/work/alpha", "/work/beta", "/work/gamma", "/work/delta"}
	rootTurns, childTurns := turnsLog(0, shape.Turns), turnsLog(2, shape.Turns)
	const base = 1_783_000_000_000
	written, err := Write(root, Log{Header{ID: Parent, CreatedAt: base, Cwd: cwds[0]}, rootTurns})
	if err != nil {
		return written, err
	}
	write := func(log Log) error {
		n, err := Write(root, log)
		written += n
		return err
	}
	for i := range shape.Children {
		h := Header{ID: ChildID(i), ParentSession: Parent, CreatedAt: base + 1 + int64(i%97),
			Cwd: cwds[0], Origin: "subagent", DelegationDepth: 1}
		if err := write(Log{h, childLog(fmt.Sprintf("child task %d", i), childTurns)}); err != nil {
			return written, err
		}
	}
	for i := range shape.Sessions - shape.Children - 1 {
		family := i / 10
		h := Header{ID: genID("o", i), CreatedAt: base + int64(i), Cwd: cwds[family%len(cwds)]}
		events := rootTurns
		if i%10 != 0 { // a child of its family's root
			h.ParentSession, h.Origin, h.DelegationDepth = genID("o", family*10), "subagent", 1
			events = childLog(fmt.Sprintf("other task %d", i), childTurns)
		}
		if err := write(Log{h, events}); err != nil {
			return written, err
		}
	}
	return written, nil
}

// ChildID is the id Generate gives Parent's i-th child.
func ChildID(i int) string { return genID("c", i) }

func genID(prefix string, i int) string {
	return fmt.Sprintf("%s%07x-0000-4000-8000-%012x", prefix, i, i)
}

// childLog is a continuable child's events: its descriptor (seq 0),
// session/end-seed (1), then turns (which start at seq 2).
func childLog(label string, turns []Event) []Event {
	d := map[string]any{"version": 1, "provider": "spawn", "label": label}
	return append([]Event{
		{Type: typeDescriptor, Seq: 0, Time: 1_783_000_000_000, Data: rawJSON(d)},
		{Type: typeEndSeed, Seq: 1, Time: 1_783_000_000_001, Data: json.RawMessage(`{}`)},
	}, turns...)
}

// rawJSON is v as compact JSON without HTML escaping (a map's keys
// sorted).
func rawJSON(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // the generator's own payloads are valid
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// turnsLog is turns ordinary turns of ten events each (~240 bytes per
// event on disk), numbered from first.
func turnsLog(first, turns int) []Event {
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 7) + "consectetur adipiscing "
	var events []Event
	add := func(typ string, data any, op json.RawMessage, sources ...int64) int64 {
		seq := int64(first + len(events))
		events = append(events, Event{Type: typ, Seq: seq, Time: 1_783_000_000_000 + seq, Data: rawJSON(data),
			SurfaceOp: op, SourceEventSeqs: sources})
		return seq
	}
	text := func(s string) []map[string]string { return []map[string]string{{"type": "text", "text": s}} }
	for turn := 1; turn <= turns; turn++ {
		add(typeTurnStart, map[string]int{"turn": turn}, nil)
		add(typeUserMessage, map[string]any{"content": text(filler), "source": map[string]string{"kind": "user"},
			"role": "user", "id": fmt.Sprintf("u%d", turn)}, appendOp)
		add(typeStepStart, map[string]int{"turn": turn, "step": 1}, nil)
		c1 := add(typeChunk, map[string]any{"turn": turn, "step": 1,
			"chunk": map[string]any{"type": "text-delta", "index": 0, "text": filler[:90]}}, nil)
		c2 := add(typeChunk, map[string]any{"turn": turn, "step": 1,
			"chunk": map[string]any{"type": "text-delta", "index": 0, "text": filler[90:]}}, nil)
		add(typeAssistantText, map[string]any{"turn": turn, "step": 1, "message": map[string]any{
			"role": "assistant", "content": text(filler), "id": fmt.Sprintf("a%d", turn),
			"source": map[string]string{"kind": "model", "provider": "mock", "model": "mock"}}}, appendOp, c1, c2)
		call := add(typeToolCall, map[string]any{"turn": turn, "step": 1, "callId": fmt.Sprintf("call%d", turn),
			"name": "read", "arguments": `{"path":"README.md"}`}, nil)
		add(typeToolResult, map[string]any{"turn": turn, "step": 1, "message": map[string]any{
			"source":  map[string]string{"kind": "tool", "callId": fmt.Sprintf("call%d", turn)},
			"content": []map[string]any{{"type": "tool-result", "toolCallId": fmt.Sprintf("call%d", turn), "content": text(filler)}},
			"role":    "user", "id": fmt.Sprintf("r%d", turn)}}, appendOp, call)
		add(typeStepEnd, map[string]int{"turn": turn, "step": 1}, nil)
		add(typeTurnEnd, map[string]any{"turn": turn, "reason": map[string]string{"kind": "completed"}}, nil)
	}
	return events
}

package storegen

import (
	"encoding/json"
	"fmt"
)

// ContinuableChild is a settled continuable child id of parentID, made by
// the spawn provider with the label "bench", whose log has about n events:
// its descriptor, session/end-seed, then completed scripted turns of six
// events (turn/start, the user message, step/start, the assistant reply,
// step/end, turn/end).
func ContinuableChild(id, parentID string, n int) Log {
	events := []Event{
		{Type: typeDescriptor, Data: json.RawMessage(`{"version":1,"provider":"spawn","label":"bench"}`)},
		{Type: typeEndSeed, Data: json.RawMessage(`{}`)},
	}
	for turn := 1; len(events) < n; turn++ {
		events = append(events, scriptedTurn(turn)...)
	}
	for i := range events {
		events[i].Seq, events[i].Time = int64(i), 1_700_000_000_000
	}
	return Log{Header: Header{ID: id, CreatedAt: 1_700_000_000_000, ParentSession: parentID,
		Origin: "subagent", DelegationDepth: 1}, Events: events}
}

// scriptedTurn is the six events of completed scripted turn number turn
// replying "ok" to "work".
func scriptedTurn(turn int) []Event {
	user := fmt.Sprintf(`{"content":[{"type":"text","text":"work"}],"source":{"kind":"user"},"role":"user","id":"m%d"}`, turn)
	reply := fmt.Sprintf(`{"turn":%d,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"source":{"kind":"model","provider":"scripted","model":"scripted"},"id":"a%d"}}`, turn, turn)
	mark := json.RawMessage(fmt.Sprintf(`{"turn":%d,"step":1}`, turn))
	return []Event{
		{Type: typeTurnStart, Data: json.RawMessage(fmt.Sprintf(`{"turn":%d,"trigger":{"kind":"message","source":{"kind":"user"}}}`, turn))},
		{Type: typeUserMessage, Data: json.RawMessage(user), SurfaceOp: appendOp},
		{Type: typeStepStart, Data: mark},
		{Type: typeAssistantText, Data: json.RawMessage(reply), SurfaceOp: appendOp},
		{Type: typeStepEnd, Data: mark},
		{Type: typeTurnEnd, Data: json.RawMessage(fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, turn))},
	}
}

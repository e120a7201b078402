package query

import (
	"encoding/json"
	"testing"

	"github.com/dsh-actors/dsh-actors/session"
)

// FuzzSurfaceFold feeds the surface fold an arbitrary third event (type,
// surfaceOp, payload, sources) after a tool result and a user message: it
// never panics, and a successful fold classifies every event.
func FuzzSurfaceFold(f *testing.F) {
	f.Add(uint8(2), `{"op":"replace","start":0,"end":0}`, []byte(`{"message":{"content":[{"content":"x"}]}}`), []byte{0})
	f.Add(uint8(0), `"append"`, []byte(`{}`), []byte{})
	f.Add(uint8(3), `{"op":"replace","start":1,"end":0}`, []byte(`null`), []byte{1, 0})
	types := []string{"user/message", "assistant/message", "tool/result", "turn/start"}
	f.Fuzz(func(t *testing.T, kind uint8, op string, data []byte, sources []byte) {
		third := session.Event{Type: types[int(kind)%len(types)], Seq: 2, Data: json.RawMessage(data)}
		if op != "" {
			third.SurfaceOp = json.RawMessage(op)
		}
		if sources != nil {
			third.SourceEventSeqs = make([]int64, len(sources))
			for i, s := range sources {
				third.SourceEventSeqs[i] = int64(s) - 1
			}
		}
		prior := logOf(
			appended(ev("tool/result", map[string]any{"message": map[string]any{"content": []map[string]string{{"content": "a"}}}})),
			userMessage("u"),
		)
		classes, err := foldSurface(append(prior, third))
		if err == nil && len(classes) != 3 {
			t.Fatalf("folded %d classes for 3 events", len(classes))
		}
	})
}

package dsh

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEventSummary: each kind of event reads as a person expects it, and
// only message text is marked as text.
func TestEventSummary(t *testing.T) {
	for _, c := range []struct {
		typ, data string
		want      string
		text      bool
	}{
		{"turn/start", `{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}`, "turn 1", false},
		{"turn/start", `{"turn":2,"trigger":{"kind":"retry"}}`, "turn 2 (retry)", false},
		{"turn/end", `{"turn":1,"reason":{"kind":"completed"}}`, "turn 1 completed", false},
		{"turn/end", `{"turn":3,"reason":{"kind":"error","message":"boom","code":"E1"}}`, "turn 3 error: boom (E1)", false},
		{"subagent/descriptor", `{"version":1,"provider":"spawn","label":"scout"}`, `provider=spawn label="scout"`, false},
		{"subagent/descriptor", `{"version":1,"provider":7,"label":"x"}`, "persisted subagent descriptor provider must be a string", false},
		{"tool/call", `{"turn":1,"step":1,"callId":"c1","name":"read","arguments":"{}"}`, "read {}", false},
		{"user/message", `{"content":[{"type":"text","text":"hi"},{"type":"text","text":"there"}],"source":{"kind":"user"},"role":"user","id":"m"}`, "hi there", true},
		{"custom/thing", `{"n":1}`, `{"n":1}`, false},
	} {
		got, text := Event{Type: c.typ, Data: json.RawMessage(c.data)}.Summary()
		require.Equal(t, c.want, got, c.typ+" "+c.data)
		require.Equal(t, c.text, text, c.typ+" "+c.data)
	}
}

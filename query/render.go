package query

import (
	"strings"

	"github.com/dsh-actors/dsh-actors/internal/jsjson"
)

// RenderListAgents renders entries as the list_agents tool does, one line
// per entry in order: "<id> [<status>] — <label>" (an em dash with a space
// either side) for a child, "<id> [diagnostic: <reason>]" for a
// diagnostic, and "(no subagents)" for an empty list. Lines are joined with
// "\n" and there is no trailing newline.
func RenderListAgents(entries []Entry) string {
	if len(entries) == 0 {
		return "(no subagents)"
	}
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = e.String()
	}
	return strings.Join(lines, "\n")
}

// String renders one entry as RenderListAgents does.
func (e Entry) String() string {
	if e.Kind == KindDiagnostic {
		return e.ID + " [diagnostic: " + e.Reason + "]"
	}
	return e.ID + " [" + e.Status + "] \u2014 " + e.Label
}

// MarshalJSON writes {kind:"child", id, label, status} or
// {kind:"diagnostic", id, reason}, in that key order, as JSON.stringify
// writes them: <, >, & and U+2028/U+2029 are not escaped (an encoder
// around it must not escape HTML either: json.Marshal would).
func (e Entry) MarshalJSON() ([]byte, error) {
	if e.Kind == KindDiagnostic {
		return jsjson.Marshal(struct {
			Kind   string `json:"kind"`
			ID     string `json:"id"`
			Reason string `json:"reason"`
		}{e.Kind, e.ID, e.Reason})
	}
	return jsjson.Marshal(struct {
		Kind   string `json:"kind"`
		ID     string `json:"id"`
		Label  string `json:"label"`
		Status string `json:"status"`
	}{e.Kind, e.ID, e.Label, e.Status})
}

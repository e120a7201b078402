package manager

import (
	"encoding/json"
	"testing"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/jsjson"
	"github.com/stretchr/testify/require"
)

// subagent/end is written as JSON.stringify writes it: nothing HTML-escaped
// (inside the blocks either), [] kept, a nil message left out.
func TestRunEndInfoIsWrittenAsJSONStringify(t *testing.T) {
	image := event.Block{Type: "image", Raw: json.RawMessage(`{"type":"image","alt":"<b>&"}`)}
	end := RunEndInfo{RunInfo: RunInfo{RunID: "r", Provider: "spawn", ID: "c", Local: true}, StopReason: agent.Completed,
		LastAssistantMessage: []event.Block{{Type: "text", Text: "<b>&\u2028"}, image}}
	data, err := jsjson.Marshal(end)
	require.NoError(t, err)
	require.Equal(t, `{"runId":"r","provider":"spawn","id":"c","local":true,"stopReason":"completed",`+
		"\"lastAssistantMessage\":[{\"type\":\"text\",\"text\":\"<b>&\u2028\"},{\"type\":\"image\",\"alt\":\"<b>&\"}]}", string(data))

	end.LastAssistantMessage = []event.Block{}
	data, err = jsjson.Marshal(end)
	require.NoError(t, err)
	require.Contains(t, string(data), `"lastAssistantMessage":[]`)
	end.LastAssistantMessage = nil
	data, err = jsjson.Marshal(end)
	require.NoError(t, err)
	require.NotContains(t, string(data), "lastAssistantMessage")
	require.NotContains(t, string(data), "discardedFollowups", "absent when nothing was discarded")
	end.DiscardedFollowups = 2
	data, err = jsjson.Marshal(end)
	require.NoError(t, err)
	require.Equal(t, `{"runId":"r","provider":"spawn","id":"c","local":true,"stopReason":"completed","discardedFollowups":2}`, string(data))
}

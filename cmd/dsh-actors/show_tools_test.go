package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/session"
)

// TestShowRendersMCPAndCustomToolCallsLikeBuiltIns: show writes an MCP
// tool's and an embedder's tool's call and result as it writes
// list_agents'.
func TestShowRendersMCPAndCustomToolCallsLikeBuiltIns(t *testing.T) {
	for _, name := range []string{"list_agents", "mcp__fs__read_file", "place_order"} {
		root := t.TempDir()
		store, err := session.OpenJSONL(root)
		require.NoError(t, err)
		result := logEvent(1, "tool/result", `{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"c1"},`+
			`"content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"Error: it failed"}],"isError":true}],"role":"user","id":"r1"}}`)
		result.SurfaceOp, result.SourceEventSeqs = []byte(`"append"`), []int64{0}
		require.NoError(t, store.Create(context.Background(), session.Header{ID: "tools", CreatedAt: 1}, []session.Event{
			logEvent(0, "tool/call", `{"turn":1,"step":1,"callId":"c1","name":"`+name+`","arguments":"{\"path\":\"/a\"}"}`),
			result,
		}))
		require.NoError(t, store.Close())
		code, stdout, stderr := run(t, "show", "--store", root, "tools")
		require.Equal(t, 0, code, stderr)
		require.Contains(t, stdout, "    0  tool/call             "+name+" {\"path\":\"/a\"}\n", name)
		require.Contains(t, stdout, "    1  tool/result           \"error: Error: it failed\"\n", name)
	}
}

package vocab

import (
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/jsjson"

	"github.com/stretchr/testify/require"
)

// decodedTypes are the types Decode has a payload for.
var decodedTypes = []string{
	TypeTurnStart, TypeTurnEnd, TypeStepStart, TypeStepEnd, TypeUserMessage, TypeSteeringMessage,
	TypeAssistantChunk, TypeAssistantMessage, TypeToolCall, TypeToolResult, TypeRequestHeader,
	TypeRequestContext, TypeLLMRetry, TypeSessionEndSeed,
}

// FuzzDecode: no input makes Decode panic, and whatever it decodes is
// written again and decodes to the same bytes (a fixed point after one
// round).
func FuzzDecode(f *testing.F) {
	seeds := []string{
		`{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}`,
		`{"turn":1,"reason":{"kind":"error","step":1,"failure":{"message":"m","code":"C","status":401}}}`,
		`{"turn":1,"reason":{"kind":"aborted","reason":{"kind":"user"}}}`,
		`{"turn":1,"step":1,"chunk":{"type":"block-end","index":0,"block":{"type":"text","text":"x"}}}`,
		`{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"stop"},"replayState":{"a":[1]}}}`,
		`{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"tool-call","id":"c","name":"n","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"},"id":"a"},"usage":{"inputTokens":1,"outputTokens":2}}`,
		`{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":[],"isError":true}],"role":"user","id":"r"},"error":{"name":"n","code":"c"}}`,
		`{"content":[{"type":"image","data":"zz"}],"source":{"kind":"user"},"role":"user","id":"m"}`,
		`{"header":{"config":{"provider":"p","model":"m"},"tools":[{"name":"t","description":"d","parameters":{}}]},"reason":"initial"}`,
		`{}`, `[]`, `null`, `{"turn":1e400}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, pick uint8, data []byte) {
		typ := decodedTypes[int(pick)%len(decodedTypes)]
		p, err := Decode(typ, data)
		if err != nil {
			return
		}
		raw, err := Encode(p)
		if err != nil {
			return // a decoded reason or chunk may lack what writing needs
		}
		back, err := Decode(typ, raw)
		require.NoError(t, err, "%s %s → %s", typ, data, raw)
		again, err := Encode(back)
		require.NoError(t, err)
		require.Equal(t, string(raw), string(again))
	})
}

// FuzzDeltaChunkEncoding: a delta chunk written without reflection is
// byte for byte what the reflective encoder writes from the chunk's wire
// shape, whatever its strings hold.
func FuzzDeltaChunkEncoding(f *testing.F) {
	for _, s := range []string{"word ", "", "caf\u00e9 \u2028\u2029 <&> \x7f", "\"\\\b\f\n\r\t\x01\x1f", "\\u2028", "\xff\xfe", "{\"a\": 1}"} {
		f.Add(s, "call_1", "subagent", 3, 12, 0)
	}
	f.Fuzz(func(t *testing.T, text, id, name string, turn, step, index int) {
		type event[W any] struct {
			Turn  int `json:"turn"`
			Step  int `json:"step"`
			Chunk W   `json:"chunk"`
		}
		tool := toolDeltaWire{Type: ChunkToolCallDelta, Index: index, ID: id, ArgumentsDelta: text}
		if name != "" {
			tool.Name = &name
		}
		for _, tc := range []struct {
			chunk Chunk
			wire  any
		}{
			{Chunk{Type: ChunkTextDelta, Index: index, Text: text}, event[deltaWire]{turn, step, deltaWire{ChunkTextDelta, index, text}}},
			{Chunk{Type: ChunkReasoningDelta, Index: index, Text: text}, event[deltaWire]{turn, step, deltaWire{ChunkReasoningDelta, index, text}}},
			{Chunk{Type: ChunkToolCallDelta, Index: index, ID: id, Name: name, ArgumentsDelta: text}, event[toolDeltaWire]{turn, step, tool}},
		} {
			got, err := Encode(AssistantChunk{Turn: turn, Step: step, Chunk: tc.chunk})
			require.NoError(t, err)
			want, err := jsjson.Marshal(tc.wire)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
		}
	})
}

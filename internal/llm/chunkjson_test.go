package llm

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// chunkSeeds are payloads of every shape the scanner reads, and some it
// must leave to json.Unmarshal.
var chunkSeeds = []string{
	`{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"word "}}]}`,
	`{"choices":[{"delta":{"reasoning_content":"r","reasoning":"s","content":null},"finish_reason":null}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}]}`,
	`{"choices":[],"usage":{"prompt_tokens":30,"completion_tokens":7,"prompt_cache_hit_tokens":20,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":3}}}`,
	` { "choices" : [ null , { "delta" : { "content" : "caf\u00e9 \ud83d\ude00 \n" } } ] } `,
	`{"choices":[{"delta":{"content":"\xff\xfe"}}]}`,
	`{"choices":[{"delta":{"tool_calls":[null,{"index":1.5e0,"id":7,"function":null}]}}]}`,
	`{"usage":{"prompt_tokens":1.5}}`,
	`{"usage":{"prompt_tokens":-0,"completion_tokens":null,"prompt_cache_hit_tokens":null}}`,
	`{"Choices":[{"delta":{"content":"folded"}}]}`,
	`{"choices":[{"delta":{"content":"a"}}],"choices":[{"delta":{"content":"b"}}]}`,
	`{"ch\u006fices":[{"delta":{"content":"escaped key"}}]}`,
	`{"choices":5}`,
	`{"choices":[{"delta":"x"}]}`,
	`{"choices":[{"delta":{"content":"a"}}]} x`,
	`{"x":[1,true,false,null,{"y":[-1.25E+3]}],"choices":[]}`,
	`{"x":"\u12"}`,
	`null`,
	`[]`,
	`{"choices":[{"delta":{"tool_calls":[{"index":1e999}]}}]}`,
	`{"usage":{"prompt_tokens":99999999999999999999}}`,
	`{"choices":[{"finish_reason":"stop","delta":{}}],"usage":null}`,
}

// FuzzDecodeChunk checks the chunk scanner against json.Unmarshal: the
// same value, and an error exactly when json.Unmarshal fails.
func FuzzDecodeChunk(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want, got wireChunk
		wantErr := json.Unmarshal(data, &want)
		gotErr := decodeChunk(data, &got)
		require.Equal(t, wantErr, gotErr)
		if wantErr == nil {
			require.Equal(t, want, got)
		}
	})
}

// TestDecodeChunkReadsCommonPayloadsItself: the payloads a server sends
// most are read by the scanner, not handed to json.Unmarshal.
func TestDecodeChunkReadsCommonPayloadsItself(t *testing.T) {
	for _, payload := range chunkSeeds[:4] {
		var c wireChunk
		s := chunkScanner{data: []byte(payload)}
		require.True(t, s.chunk(&c) && s.end(), payload)
	}
}

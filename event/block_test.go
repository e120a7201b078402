package event

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/jsjson"
)

// A block read from a log is written back as JSON.stringify(JSON.parse(it)):
// nothing reordered, nothing dropped.
func TestBlocksReadFromALogWriteBackTheSameBytes(t *testing.T) {
	data := `{"content":[{"type":"text","text":"hi"},{"text":"a","type":"text"},{"type":"image","source":{"data":"zz"}},"odd",{"__proto__":1,"type":"x"}],"source":{"kind":"user"},"role":"user","id":"m1"}`
	var m UserMessage
	require.NoError(t, json.Unmarshal([]byte(data), &m))
	require.Equal(t, []string{"text", "text", "image", "", "x"}, []string{m.Content[0].Type, m.Content[1].Type, m.Content[2].Type, m.Content[3].Type, m.Content[4].Type})
	require.Nil(t, m.Content[0].Raw)
	require.Equal(t, "a", m.Content[1].Text)
	out, err := json.Marshal(m)
	require.NoError(t, err)
	require.Equal(t, data, string(out))
}

// A tool-call block is written in the original's key order and read back;
// other blocks are not calls.
func TestToolCallBlock(t *testing.T) {
	b := ToolCallBlock{ID: "c", Name: "n", Arguments: `{"a":"<b>"}`}.Block()
	require.Equal(t, `{"type":"tool-call","id":"c","name":"n","arguments":"{\"a\":\"<b>\"}"}`, string(b.Raw))
	call, ok := b.ToolCall()
	require.True(t, ok)
	require.Equal(t, ToolCallBlock{ID: "c", Name: "n", Arguments: `{"a":"<b>"}`}, call)
	var read Block
	require.NoError(t, json.Unmarshal(b.Raw, &read))
	call, ok = read.ToolCall()
	require.True(t, ok)
	require.Equal(t, "c", call.ID)
	_, ok = Text("x")[0].ToolCall()
	require.False(t, ok)
	require.NoError(t, json.Unmarshal([]byte(`{"type":"tool-call","id":"c","name":"n","arguments":{}}`), &read))
	_, ok = read.ToolCall()
	require.False(t, ok, "arguments must be a string")
	require.Equal(t, "ab", TextOf([]Block{{Type: BlockText, Text: "a"}, b, {Type: BlockText, Text: "b"}}))
}

// The plain-text fast path reads a block exactly as the general parse
// does, and takes only the compact two-string shape it can read alone.
func FuzzPlainTextBlockReadsAsTheParser(f *testing.F) {
	for _, seed := range []string{
		`{"type":"text","text":"word word "}`, `{"type":"","text":""}`,
		`{"type":"text","text":"a\"b"}`, `{"type":"text","text":"a\nb"}`,
		"{\"type\":\"text\",\"text\":\"a\x01\"}", "{\"type\":\"text\",\"text\":\"\xff\"}",
		"{\"type\":\"text\",\"text\":\"\u2028 é 😀\"}", `{"type":"text", "text":"a"}`,
		`{"text":"a","type":"text"}`, `{"type":"text","text":"a","x":1}`,
		`{"type":"text","text":"a"} `, `{"type":"text","text":"a"}}`, `{"type":"text"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := plainTextBlock(data)
		if !ok {
			return
		}
		v, err := jsjson.Parse(data)
		require.NoError(t, err, "%q", data)
		require.Equal(t, blockOf(v), fast, "%q", data)
	})
}

// The fast path takes the shape a text block is logged in, and leaves
// escapes, other orders and other keys to the general parse.
func TestPlainTextBlock(t *testing.T) {
	for data, want := range map[string]bool{
		`{"type":"text","text":"word word "}`:      true,
		"{\"type\":\"text\",\"text\":\"é\u2028\"}": true,
		`{"type":"text","text":"a\nb"}`:            false,
		"{\"type\":\"text\",\"text\":\"\xff\"}":    false,
		`{"text":"a","type":"text"}`:               false,
		`{"type":"text","text":"a","x":1}`:         false,
		`{"type":"text", "text":"a"}`:              false,
	} {
		b, ok := plainTextBlock([]byte(data))
		require.Equal(t, want, ok, data)
		var read Block
		require.NoError(t, read.UnmarshalJSON([]byte(data)), data)
		if ok {
			require.Equal(t, read, b, data)
		}
	}
}

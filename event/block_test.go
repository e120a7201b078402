package event

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The expectations are what JSON.stringify prints for zod 4.4.3's
// z.looseObject({type: z.string()}).parse(JSON.parse(input)).
func TestLooseBlockIsTheOriginalsParse(t *testing.T) {
	for _, tc := range []struct {
		in, want   string
		typ, text  string
		plainBlock bool
	}{
		{`{"data":"zz","type":"image"}`, `{"type":"image","data":"zz"}`, "image", "", false},
		{`{"type":"text","text":"a","extra":{"b":1.50,"a":[1e2]}}`, `{"type":"text","text":"a","extra":{"b":1.5,"a":[100]}}`, "text", "a", false},
		{`{"z":1,"type":"x","type2":2}`, `{"type":"x","z":1,"type2":2}`, "x", "", false},
		{`{"type":"t","__proto__":{"x":1}}`, `{"type":"t"}`, "t", "", false},
		{`{"type":"x","1":2,"b":3,"0":1}`, `{"0":1,"1":2,"type":"x","b":3}`, "x", "", false},
		{`{"text":"a","type":"text"}`, `{"type":"text","text":"a"}`, "text", "a", true},
		{`{"type":"text"}`, `{"type":"text"}`, "text", "", false},
		{`{"type":"text","text":5}`, `{"type":"text","text":5}`, "text", "", false},
		{`{"type":"a","type":"b"}`, `{"type":"b"}`, "b", "", false},
		{` {"type" : "text" , "text" : "a<>&\u2028\u0007"} `, "{\"type\":\"text\",\"text\":\"a<>&\u2028\\u0007\"}", "text", "a<>&\u2028\a", true},
	} {
		b, err := LooseBlock([]byte(tc.in))
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.typ, b.Type, tc.in)
		require.Equal(t, tc.text, b.Text, tc.in)
		require.Equal(t, tc.plainBlock, b.Raw == nil, tc.in)
		out, err := b.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, tc.want, string(out), tc.in)
	}
	for _, bad := range []string{`[]`, `"text"`, `{}`, `{"type":1}`, `{"type":null}`, `{"type":"a"`} {
		_, err := LooseBlock([]byte(bad))
		require.Error(t, err, bad)
	}
}

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

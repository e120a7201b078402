package session

import (
	"encoding/json"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/jsjson"
	"github.com/stretchr/testify/require"
)

// One codec writes JSON.stringify's bytes: what Live.Append stores as an
// event's data is, byte for byte, what jsjson.Marshal writes for the same
// value (the siblings encode their wire and CLI output with jsjson.Marshal),
// raw JSON text included.
func TestEventDataIsJSJSONMarshal(t *testing.T) {
	type inner struct {
		Raw  json.RawMessage `json:"raw,omitempty"`
		List []any           `json:"list"`
	}
	type payload struct {
		Text  string            `json:"text"`
		N     float64           `json:"n"`
		Map   map[string]string `json:"map,omitempty"`
		Inner *inner            `json:"inner,omitempty"`
	}
	values := []any{
		nil, true, 0, -1.5, 1e21, "", "a<b>&c", "\u2028\u2029", `\u2028 as text`, "\x01\x7f\t\n\"\\",
		"日本語 😀", []string{"x", "y"}, map[string]int{"b": 2, "a": 1},
		payload{Text: "a<b>&c\u2028d\u2029\"\\\x01", N: 3},
		payload{Map: map[string]string{"z": "\u2029", "a": "<"}, Inner: &inner{Raw: json.RawMessage(`{ "k" : "\u2028" , "l":[1, 2] }`)}},
		json.RawMessage(`{"b":[1,2],"a":"x\u2028"}`),
		json.RawMessage("{ \"b\" : [1, 2],\n \"a\": \"x\\u2028\\\\u2029\" }"),
		json.RawMessage(`"<&>"`),
		json.RawMessage(`[ ]`),
	}
	for _, v := range values {
		want, err := jsjson.Marshal(v)
		require.NoError(t, err, "%#v", v)
		got, err := encodeData(v)
		require.NoError(t, err, "%#v", v)
		require.Equal(t, string(want), string(got), "%#v", v)
	}
}

package event_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/event"
)

// TestMarshalWritesWhatJSONStringifyWrites: the characters encoding/json
// escapes are raw, an escaped backslash before the text "u2028" stays
// escaped, and other escapes stay as encoding/json writes them.
func TestMarshalWritesWhatJSONStringifyWrites(t *testing.T) {
	for in, want := range map[string]string{
		"a<b>&c":               `"a<b>&c"`,
		"line\u2028para\u2029": "\"line\u2028para\u2029\"",
		`\u2028`:               `"\\u2028"`,
		"tab\t\"q\"\x01":       `"tab\t\"q\"\u0001"`,
	} {
		got, err := event.Marshal(in)
		require.NoError(t, err)
		require.Equal(t, want, string(got), "Marshal(%q)", in)
	}
	_, err := event.Marshal(func() {})
	require.Error(t, err, "a value JSON cannot hold")
}

// ExampleMarshal prints a value as the original harness would, then
// indented.
func ExampleMarshal() {
	b, err := event.Marshal(struct {
		Label string `json:"label"`
		Text  []event.Block
	}{"a <b> & c", event.Text("hi")})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
	var indented bytes.Buffer
	if err := json.Indent(&indented, b, "", " "); err != nil {
		panic(err)
	}
	fmt.Println(indented.String())
	// Output:
	// {"label":"a <b> & c","Text":[{"type":"text","text":"hi"}]}
	// {
	//  "label": "a <b> & c",
	//  "Text": [
	//   {
	//    "type": "text",
	//    "text": "hi"
	//   }
	//  ]
	// }
}

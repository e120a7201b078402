package query

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRendersTheEmptyResult(t *testing.T) {
	require.Equal(t, "(no subagents)", RenderListAgents(nil))
	require.Equal(t, "(no subagents)", RenderListAgents([]Entry{}))
}

func TestRendersChildrenAndDiagnosticsInOrder(t *testing.T) {
	entries := []Entry{
		child("c1", "real child", StatusComplete),
		child("running-child", "still working", StatusRunning),
		diag("broken-child", ReasonCorrupt),
	}
	require.Equal(t, "c1 [complete] \u2014 real child\nrunning-child [running] — still working\n"+
		"broken-child [diagnostic: corrupt]", RenderListAgents(entries))
}

func TestEntriesMarshalToTheToolSchema(t *testing.T) {
	b, err := json.Marshal([]Entry{child("c", "", StatusComplete), diag("d", reasonUnavailable)})
	require.NoError(t, err)
	require.Equal(t, `[{"kind":"child","id":"c","label":"","status":"complete"},`+
		`{"kind":"diagnostic","id":"d","reason":"unavailable"}]`, string(b))
}

// JSON.stringify writes <, >, & and U+2028/U+2029 as they are;
// encoding/json would escape all five.
func TestEntriesMarshalAsJSONStringifyDoes(t *testing.T) {
	label := "a<b & c>\u2028\u2029 \"q\" 中文"
	b, err := child("c<&>", label, StatusComplete).MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, `{"kind":"child","id":"c<&>","label":"a<b & c>`+"\u2028\u2029"+` \"q\" 中文","status":"complete"}`, string(b))
	b, err = diag("d>\u2028", ReasonCorrupt).MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, "{\"kind\":\"diagnostic\",\"id\":\"d>\u2028\",\"reason\":\"corrupt\"}", string(b))
	require.Equal(t, "c<&> [complete] \u2014 "+label, RenderListAgents([]Entry{child("c<&>", label, StatusComplete)}))
}

package modelagent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
)

// A fork child sends its parent's finished turns (not the one in flight)
// before its own prompt; a foreground spawn child's answer is the tool's
// result, and the run is disposed when the call returns.
func TestForkAndForegroundChildren(t *testing.T) {
	srv := llmtest.NewServer(
		llmtest.Stream(llmtest.Say("first answer")),
		llmtest.Stream(llmtest.CallTools(llmtest.Call{ID: "call_fork", Name: "subagent_fork",
			Args: []string{`{"description": "review", "prompt": "Review it.", "run_in_background": true}`}})),
		llmtest.Stream(llmtest.CallTools(llmtest.Call{ID: "call_fg", Name: "subagent",
			Args: []string{`{"description": "count", "prompt": "Count to two."}`}})),
		llmtest.Stream(llmtest.Say("all done")),
	)
	defer srv.Close()
	forkPrompt := []byte(`{"role":"user","content":"Review it."}`)
	spawnPrompt := []byte(`{"role":"user","content":"Count to two."}`)
	srv.Route(func(r llmtest.Received) bool {
		return bytes.HasSuffix(r.Body[:bytes.Index(r.Body, []byte(`],"stream"`))], forkPrompt)
	},
		llmtest.Stream(llmtest.Say("reviewed")))
	srv.Route(func(r llmtest.Received) bool { return bytes.Contains(r.Body, spawnPrompt) },
		llmtest.Stream(llmtest.Say("one two")))

	r := newRig(t, llmtest.DeepSeekOn(srv, 0))
	h := r.turn(t, "forker", "turn one")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := h.Followup(ctx, event.Text("turn two"), event.Source{Kind: event.SourceUser})
	require.NoError(t, err)
	require.NoError(t, h.Activation().WhenIdle(ctx))

	log := events(t, h.Session())
	results := ofType(log, "tool/result")
	require.Len(t, results, 2)
	require.Regexp(t, `"text":"started subagent [0-9a-f-]{36}"`, results[0].Raw)
	require.Contains(t, results[1].Raw, `"content":[{"type":"text","text":"one two"}],"isError":false`)
	require.Equal(t, []string{`{"turn":1,"reason":{"kind":"completed"}}`, `{"turn":2,"reason":{"kind":"completed"}}`},
		[]string{ofType(log, "turn/end")[0].Raw, ofType(log, "turn/end")[1].Raw})

	var forkRequest wireRequest
	for _, got := range srv.Received() {
		if bytes.Contains(got.Body, forkPrompt) && !bytes.Contains(got.Body, []byte("turn two")) {
			require.NoError(t, json.Unmarshal(got.Body, &forkRequest))
		}
	}
	require.Equal(t, []string{"system", "user", "assistant", "user"}, roles(forkRequest), "the parent's finished turn, then the prompt")
	require.Equal(t, "turn one", forkRequest.Messages[1].Content)
	require.Equal(t, "first answer", forkRequest.Messages[2].Content)
}

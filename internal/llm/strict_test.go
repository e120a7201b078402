package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/llm"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
)

// strictOrder answers as next when the request's messages are in an order
// a strict OpenAI-compatible server takes (llama.cpp's and vLLM's chat
// templates, OpenAI's API), else 400 naming the fault: a "tool" message
// must answer a tool call of the assistant message before it (past the
// other tool messages), once; an assistant's tool calls must all be
// answered before any other message.
func strictOrder(next llmtest.Behavior) llmtest.Behavior {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if fault := orderFault(body); fault != "" {
			llmtest.Status(http.StatusBadRequest, fmt.Sprintf(`{"error":{"message":%q}}`, fault))(w, r)
			return
		}
		next(w, r)
	}
}

// orderFault is what a strict server refuses in body's messages, "" for
// nothing.
func orderFault(body []byte) string {
	var req struct {
		Messages []struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return err.Error()
	}
	open := map[string]bool{}
	for i, m := range req.Messages {
		switch {
		case m.Role == "tool" && !open[m.ToolCallID]:
			return fmt.Sprintf("messages[%d]: a tool message must answer a tool call of the assistant message before it", i)
		case m.Role == "tool":
			delete(open, m.ToolCallID)
		case len(open) > 0:
			return fmt.Sprintf("messages[%d]: the assistant's tool calls must be answered first", i)
		}
		for _, c := range m.ToolCalls {
			open[c.ID] = true
		}
	}
	return ""
}

// toolResult is a prompt's tool-result block answering call with text.
func toolResult(call, text string) event.Block {
	var b event.Block
	content := `[]`
	if text != "" {
		content = `[{"type":"text","text":` + fmt.Sprintf("%q", text) + `}]`
	}
	if err := b.UnmarshalJSON([]byte(`{"type":"tool-result","toolCallId":"` + call + `","content":` + content + `,"isError":false}`)); err != nil {
		panic(err)
	}
	return b
}

// A prompt's tool-result block goes as the original sends it, a "tool"
// message, only where a strict server takes one: answering a tool call
// still open. Anywhere else (no call open, another call's id) its output
// joins the prompt's text in place, so nothing the prompt carried is lost
// and the server does not refuse the request; with text as well, the
// tool message goes first, right after the call it answers.
func TestAToolResultInAPromptIsSentInAnOrderStrictServersTake(t *testing.T) {
	call := event.ToolCallBlock{ID: "c1", Name: "list_agents", Arguments: "{}"}.Block()
	greeted := []llm.Message{
		{Role: "user", Content: event.Text("hi")},
		{Role: "assistant", Content: event.Text("hello")},
	}
	calling := []llm.Message{
		{Role: "user", Content: event.Text("go")},
		{Role: "assistant", Content: []event.Block{call}},
	}
	for _, tc := range []struct {
		name     string
		history  []llm.Message
		prompt   []event.Block
		messages string
	}{
		{"after a finished reply", greeted, []event.Block{toolResult("c9", "out")},
			`{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"out"}`},
		{"with no output, first in the conversation", nil, []event.Block{toolResult("c9", "")},
			`{"role":"user","content":"(no output)"}`},
		{"beside text", greeted, []event.Block{event.Text("see: ")[0], toolResult("c9", "out"), event.Text(" ok")[0]},
			`{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"see: out ok"}`},
		{"answering an open call, beside text", calling, []event.Block{event.Text("also")[0], toolResult("c1", "done"), toolResult("c1", "again")},
			`{"role":"user","content":"go"},` +
				`{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"list_agents","arguments":"{}"}}]},` +
				`{"role":"tool","tool_call_id":"c1","content":"done"},{"role":"user","content":"alsoagain"}`},
		{"answering the open call and another", calling, []event.Block{toolResult("c1", "done"), toolResult("c2", "other")},
			`{"role":"user","content":"go"},` +
				`{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"list_agents","arguments":"{}"}}]},` +
				`{"role":"tool","tool_call_id":"c1","content":"done"},{"role":"user","content":"other"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(strictOrder(llmtest.Stream(llmtest.Say("ok"))))
			defer srv.Close()
			c, err := llm.NewDeepSeek(llm.Config{Profile: llm.ProfileOpenAI, BaseURL: srv.URL + "/v1", Defaults: llm.DefaultOpenAI})
			require.NoError(t, err)
			messages := append(append([]llm.Message{}, tc.history...), llm.Message{Role: "user", Content: tc.prompt})
			_, err = collect(context.Background(), c, llm.Request{Model: "m", Messages: messages})
			require.NoError(t, err, "the strict server took the request")
			require.Contains(t, string(srv.Last().Body), `"messages":[`+tc.messages+`]`)
		})
	}
}

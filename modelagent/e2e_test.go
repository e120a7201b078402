package modelagent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
	"github.com/dsh-actors/dsh-actors/query"
)

// wireRequest is the part of a chat-completions body the test reads.
type wireRequest struct {
	Messages []struct {
		Role       string `json:"role"`
		Content    string `json:"content"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

var startedID = regexp.MustCompile(`started subagent ([0-9a-f-]{36})`)

// sendToChild calls send_message with the id the first tool result named.
func sendToChild(w http.ResponseWriter, r *http.Request) {
	var body bytes.Buffer
	_, _ = body.ReadFrom(r.Body)
	id := startedID.FindStringSubmatch(body.String())[1]
	llmtest.Stream(llmtest.CallTools(llmtest.Call{ID: "call_send", Name: "send_message",
		Args: []string{`{"subagent_id": "` + id + `", `, `"message": "Also say BYE"}`}}))(w, r)
}

// gated answers with r once release is closed.
func gated(release <-chan struct{}, r llmtest.Response) llmtest.Behavior {
	return func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-release:
		case <-req.Context().Done():
			return
		}
		llmtest.Stream(r)(w, req)
	}
}

func TestAParentDelegatesListsSendsAndAnswers(t *testing.T) {
	release := make(chan struct{})
	srv := llmtest.NewServer(
		llmtest.Stream(llmtest.CallTools(llmtest.Call{ID: "call_bg_start", Name: "subagent",
			Args: []string{`{"description": "Reply with CHILD_OK", `, `"prompt": "Reply with exactly CHILD_OK.", "run_in_background": true}`}})),
		llmtest.Stream(llmtest.CallTools(llmtest.Call{ID: "call_list", Name: "list_agents", Args: []string{`{}`}})),
		sendToChild,
		llmtest.Stream(llmtest.CallTools(
			llmtest.Call{ID: "call_unknown", Name: "task_output", Args: []string{`{"task_id": "subagent-1"}`}},
			llmtest.Call{ID: "call_bad", Name: "subagent", Args: []string{`{"description": "x", "run_in_background": "yes"}`}},
		)),
		llmtest.Stream(llmtest.Say("DONE")),
	)
	defer srv.Close()
	defer func() { // on failure, before Close waits for the gated request
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	srv.Route(func(r llmtest.Received) bool { return isChild(r.Body) },
		gated(release, llmtest.Say("CHILD_OK")), llmtest.Stream(llmtest.Say("BYE")))

	r := newRig(t, llmtest.DeepSeekOn(srv, 0))
	h := r.turn(t, "11111111-1111-4111-8111-111111111111", "Start a background subagent, list it, message it, then say DONE.")
	log := events(t, h.Session())

	// The parent's log: five steps, each request/header only on the first.
	require.Equal(t, []int64{1, 2, 3, 4, 5}, stepNumbers(log))
	require.Len(t, ofType(log, "request/header"), 1)
	require.Equal(t, `{"turn":1,"reason":{"kind":"completed"}}`, log[len(log)-1].Raw)
	results := ofType(log, "tool/result")
	require.Len(t, results, 5)
	childID := startedID.FindStringSubmatch(results[0].Raw)[1]
	texts := []string{
		"started subagent " + childID,
		childID + " [running] \u2014 Reply with CHILD_OK",
		"message queued as the next turn for subagent " + childID,
		`Error: unknown tool \"task_output\"`,
		`Error: invalid arguments: missing required property \"prompt\"; \"run_in_background\" must be a boolean`,
	}
	for i, text := range texts {
		require.Contains(t, results[i].Raw, `"content":[{"type":"text","text":"`+text+`"}]`)
	}
	for _, msg := range ofType(log, "assistant/message") {
		var seqs []int64
		for _, e := range log[:msg.Seq] {
			if e.Type == "assistant/chunk" && e.Data["step"] == msg.Data["step"] {
				seqs = append(seqs, e.Seq)
			}
		}
		require.Equal(t, seqs, msg.SourceEventSeqs, "the message cites its step's chunks")
		require.Equal(t, "append", msg.SurfaceOp)
	}
	step1 := log[:ofType(log, "step/end")[0].Seq+1]
	require.Equal(t, []string{"turn/start", "user/message", "step/start", "request/header", "request/context",
		"assistant/chunk", "assistant/chunk", "assistant/chunk", "assistant/chunk", "assistant/chunk", "assistant/chunk",
		"assistant/message", "tool/call", "tool/result", "step/end"}, types(step1))
	require.Equal(t, `{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":0,"id":"call_bg_start","name":"subagent","argumentsDelta":"{\"description\": \"Reply with CHILD_OK\", "}}`, step1[6].Raw)

	// The requests: tools offered, results sent back as role "tool" after the assistant's tool_calls.
	got := srv.Received()
	var first, second wireRequest
	require.NoError(t, json.Unmarshal(got[0].Body, &first))
	require.Len(t, first.Tools, 4)
	require.Equal(t, `{"type":"object","properties":{"description":{"type":"string","description":"A 3-5 word label for the task, shown to users."},"prompt":{"type":"string","description":"The whole task, self-contained: the subagent sees nothing of this conversation."},"run_in_background":{"type":"boolean","description":"Start a long-lived background subagent and return its subagent id; it reports nothing back, send it more work with send_message."}},"required":["description","prompt"]}`,
		string(first.Tools[2].Function.Parameters))
	parentRequests := 0
	for _, g := range got {
		if !isChild(g.Body) {
			parentRequests++
			if parentRequests == 2 {
				require.NoError(t, json.Unmarshal(g.Body, &second))
			}
		}
	}
	require.Equal(t, 5, parentRequests)
	require.Equal(t, []string{"system", "user", "assistant", "tool"}, roles(second))
	require.Equal(t, "call_bg_start", second.Messages[2].ToolCalls[0].ID)
	require.Equal(t, `{"description": "Reply with CHILD_OK", "prompt": "Reply with exactly CHILD_OK.", "run_in_background": true}`,
		second.Messages[2].ToolCalls[0].Function.Arguments)
	require.Equal(t, "call_bg_start", second.Messages[3].ToolCallID)
	require.Equal(t, "started subagent "+childID, second.Messages[3].Content)

	// The child, its first turn held at the model, is live: the catalog
	// lists it running.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	live, err := r.service.ListChildren(ctx, h.ID())
	require.NoError(t, err)
	require.Equal(t, []query.Entry{{Kind: query.KindChild, ID: childID, Label: "Reply with CHILD_OK", Status: query.StatusRunning}}, live)

	// The child: released, it answers its prompt and then the follow-up.
	close(release)
	child := r.rt.Registry().Get(childID)
	require.NotNil(t, child)
	for child.Session().Len() > 0 && len(ofType(events(t, child.Session()), "turn/end")) < 2 {
		require.NoError(t, child.Activation().WhenIdle(ctx))
	}
	childLog := events(t, child.Session())
	header := child.Session().Header()
	require.Equal(t, h.ID(), header.ParentSession)
	require.Equal(t, 1, header.DelegationDepth)
	require.Equal(t, "subagent/descriptor", childLog[0].Type)
	require.Contains(t, childLog[0].Raw, `"provider":"spawn","label":"Reply with CHILD_OK"`)
	require.Equal(t, "session/end-seed", childLog[1].Type)
	prompts := ofType(childLog, "user/message")
	require.Len(t, prompts, 2)
	require.Contains(t, prompts[0].Raw, `"source":{"kind":"user"}`)
	require.Contains(t, prompts[1].Raw, `"source":{"kind":"coordinator","senderSessionId":"`+h.ID()+`"}`)
	replies := ofType(childLog, "assistant/message")
	require.Contains(t, replies[0].Raw, `"text":"CHILD_OK"`)
	require.Contains(t, replies[1].Raw, `"text":"BYE"`)
	for _, end := range ofType(childLog, "turn/end") {
		require.Contains(t, end.Raw, `"reason":{"kind":"completed"}`)
	}

	// What was written reads back through the store and the catalog:
	// drained below its exact parent, the child is disposed and listed
	// complete from its log alone.
	require.NoError(t, r.service.DrainContinuableDescendants(ctx, []*parent.Handle{h}))
	require.Nil(t, r.rt.Registry().Get(childID), "the drain disposed the child")
	entries, err := r.service.ListChildren(ctx, h.ID())
	require.NoError(t, err)
	require.Equal(t, []query.Entry{{Kind: query.KindChild, ID: childID, Label: "Reply with CHILD_OK", Status: query.StatusComplete}}, entries)
	require.Equal(t, childID+" [complete] \u2014 Reply with CHILD_OK", query.RenderListAgents(entries))
}

// isChild tells the child's requests from the parent's: its first user
// message is its prompt.
func isChild(body []byte) bool {
	return bytes.Contains(body, []byte(`{"role":"user","content":"Reply with exactly CHILD_OK."}`))
}

func roles(r wireRequest) []string {
	var out []string
	for _, m := range r.Messages {
		out = append(out, m.Role)
	}
	return out
}

package modelagent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
	"github.com/dsh-actors/dsh-actors/modelagent"
)

// tasksGuidance is the original's system prompt section of the task tools.
const tasksGuidance = "Track every background task id you start. You are notified in-session when a task " +
	"finishes \u2014 do not busy-poll or sleep on one; keep working on independent steps and do not duplicate a " +
	"running task's work. Before giving a final answer, collect every still-relevant task with task_output (set " +
	"wait: true only when you are genuinely blocked on it), and task_kill tasks that stopped mattering."

// newTaskRig is a rig whose model agents have background tasks.
func newTaskRig(t *testing.T, srv *llmtest.Server) (*rig, *modelagent.Agents) {
	t.Helper()
	retry := rigRetry()
	agents := modelagent.NewOver(modelagent.Config{Model: "deepseek-v4-flash", Retry: &retry, BackgroundTasks: true},
		llmtest.DeepSeekOn(srv, 0), func() float64 { return 0.5 })
	return rigOf(t, agents), agents
}

// call is a step calling one tool with args.
func call(id, name, args string) llmtest.Behavior {
	return llmtest.Stream(llmtest.CallTools(llmtest.Call{ID: id, Name: name, Args: []string{args}}))
}

// releasing closes release, then behaves as b.
func releasing(release chan struct{}, b llmtest.Behavior) llmtest.Behavior {
	return func(w http.ResponseWriter, r *http.Request) {
		close(release)
		b(w, r)
	}
}

// toolResults are the texts of a log's tool results, in order.
func toolResults(t *testing.T, log []logged) []string {
	t.Helper()
	var texts []string
	for _, r := range ofType(log, "tool/result") {
		content := r.Data["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["content"].([]any)
		texts = append(texts, content[0].(map[string]any)["text"].(string))
	}
	return texts
}

func isKid(body []byte) bool {
	return bytes.Contains(body, []byte(`{"role":"user","content":"Say CHILD."}`))
}

func TestABackgroundDelegationIsATaskReadWaitedListedAndFenced(t *testing.T) {
	release := make(chan struct{})
	srv := llmtest.NewServer(
		call("c1", "subagent", `{"description": "kid", "prompt": "Say CHILD.", "run_in_background": true}`),
		call("c2", "task_output", `{"task_id": "subagent-1"}`),
		call("c3", "task_list", `{}`),
		releasing(release, call("c4", "task_output", `{"task_id": "subagent-1", "wait": true, "timeout_ms": 60000}`)),
		call("c5", "task_output", `{"task_id": "subagent-1"}`),
		call("c6", "task_kill", `{"task_id": "subagent-1"}`),
		call("c7", "task_output", `{"task_id": "subagent-9"}`),
		call("c8", "task_output", `{"task_id": ""}`),
		llmtest.Stream(llmtest.Say("DONE")),
		// the second agent
		call("d1", "task_output", `{"task_id": "subagent-1"}`),
		call("d2", "task_list", `{}`),
		llmtest.Stream(llmtest.Say("NONE")),
	)
	defer srv.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	srv.Route(func(r llmtest.Received) bool { return isKid(r.Body) }, gated(release, llmtest.Say("CHILD")))
	r, _ := newTaskRig(t, srv)
	h := r.turn(t, "11111111-1111-4111-8111-111111111111", "delegate in the background, collect, then say DONE")
	require.Equal(t, []string{
		"started background subagent task subagent-1",
		"(no new output)\n[status: running]",
		"subagent-1 [subagent] running \u2014 kid",
		"CHILD\n[status: completed]",
		"CHILD\n[status: completed]",
		"task subagent-1 had already finished [status: completed]",
		"Error: unknown task subagent-9",
		`Error: invalid task_id: expected a non-empty string, got ""`,
	}, toolResults(t, events(t, h.Session())))
	require.Equal(t, []string{h.ID()}, liveIDs(r), "the one-shot child was disposed")

	other := r.turn(t, "22222222-2222-4222-8222-222222222222", "look at another agent's task")
	require.Equal(t, []string{
		"Error: task subagent-1 belongs to another session",
		"(no background tasks)",
	}, toolResults(t, events(t, other.Session())))

	var first wireRequest
	require.NoError(t, json.Unmarshal(srv.Received()[0].Body, &first))
	var names []string
	for _, tool := range first.Tools {
		names = append(names, tool.Function.Name)
	}
	require.Equal(t, []string{"list_agents", "send_message", "subagent", "subagent_fork", "task_kill", "task_list", "task_output"}, names,
		"the task tools in name order, as the original lists tools")
	require.Equal(t, `{"type":"object","properties":{"task_id":{"type":"string","description":"Task id returned by the tool that started the background work."},"wait":{"type":"boolean","description":"Block until the task reaches a terminal status or the timeout expires. A timed-out wait returns [status: running] and leaves the task alive."},"timeout_ms":{"type":"number","description":"Max wait in milliseconds (only meaningful with wait: true). Defaults to the configured wait timeout; capped by the configured maximum."}},"required":["task_id"]}`,
		string(first.Tools[6].Function.Parameters))
	require.Contains(t, string(first.Tools[2].Function.Parameters), `"run_in_background":{"type":"boolean","description":"Run as a background task and return its id; collect with task_output or stop with task_kill."}`)
	require.Equal(t, modelagent.DefaultSystem+"\n\n"+tasksGuidance, first.Messages[0].Content,
		"the original's tool:tasks section follows the system prompt")
}

func liveIDs(r *rig) []string {
	var ids []string
	for _, h := range r.rt.Registry().List() {
		ids = append(ids, h.ID())
	}
	return ids
}

func TestTaskKillStopsTheChildAndTheTaskEndsKilled(t *testing.T) {
	srv := llmtest.NewServer(
		call("c1", "subagent", `{"description": "kid", "prompt": "Say CHILD.", "run_in_background": true}`),
		call("c2", "task_kill", `{"task_id": "subagent-1", "reason": "not needed"}`),
		call("c3", "task_output", `{"task_id": "subagent-1", "wait": true}`),
		call("c4", "task_kill", `{"task_id": "subagent-1"}`),
		llmtest.Stream(llmtest.Say("DONE")),
	)
	defer srv.Close()
	defer holdChildReplies(srv)()
	r, _ := newTaskRig(t, srv)
	h := r.turn(t, "11111111-1111-4111-8111-111111111111", "delegate, then stop it")
	require.Equal(t, []string{
		"started background subagent task subagent-1",
		"requested cancellation of task subagent-1",
		"(no new output)\n[status: killed]",
		"task subagent-1 had already finished [status: killed]",
	}, toolResults(t, events(t, h.Session())))
	require.Equal(t, []string{h.ID()}, liveIDs(r), "the killed child was disposed before the task ended")
}

// afterSettled behaves as b once the background task id settled (it
// fails the request after a minute).
// agents is read when the request comes: the rig is built after the
// server.
func afterSettled(agents **modelagent.Agents, id string, b llmtest.Behavior) llmtest.Behavior {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-(*agents).TaskSettled(id):
			b(w, r)
		case <-time.After(time.Minute):
			http.Error(w, "waited a minute for task "+id+" to settle", http.StatusInternalServerError)
		}
	}
}

// waitSettled waits for the background task id to settle.
func waitSettled(t *testing.T, agents *modelagent.Agents, id string) {
	t.Helper()
	select {
	case <-agents.TaskSettled(id):
	case <-time.After(time.Minute):
		t.Fatalf("waited a minute for task %s to settle", id)
	}
}

const kidNotice = "background task subagent-1 (subagent: kid) finished [status: completed]. Read its output with task_output."

// noticeAt is the position of the completion notice in log, checking its
// shape: a user message with source {kind:"plugin", plugin:"tool-tasks"}.
func noticeAt(t *testing.T, log []logged, text string) int {
	t.Helper()
	for i, e := range log {
		if e.Type == "user/message" && strings.Contains(e.Raw, "background task ") {
			require.JSONEq(t, `{"kind":"plugin","plugin":"tool-tasks"}`, string(must(json.Marshal(e.Data["source"]))))
			require.Equal(t, text, e.Data["content"].([]any)[0].(map[string]any)["text"])
			require.Equal(t, "append", e.SurfaceOp)
			return i
		}
	}
	t.Fatalf("no completion notice in the log")
	return -1
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// A task that ends unread while its agent is idle is appended to the
// agent's log at once, without a turn, so the next prompt comes after it.
func TestAnUnreadTaskEndOfAnIdleAgentIsAppendedAtOnce(t *testing.T) {
	srv := llmtest.NewServer(
		call("c1", "subagent", `{"description": "kid", "prompt": "Say CHILD.", "run_in_background": true}`),
		llmtest.Stream(llmtest.Say("STARTED")),
		llmtest.Stream(llmtest.Say("NOTED")),
	)
	defer srv.Close()
	release := make(chan struct{})
	srv.Route(func(r llmtest.Received) bool { return isKid(r.Body) }, gated(release, llmtest.Say("CHILD")))
	r, agents := newTaskRig(t, srv)
	h := r.turn(t, "11111111-1111-4111-8111-111111111111", "delegate in the background")
	close(release)
	waitSettled(t, agents, "subagent-1")
	log := events(t, h.Session())
	require.Equal(t, len(log)-1, noticeAt(t, log, kidNotice), "appended after the idle agent's last turn")
	require.Equal(t, "turn/end", log[len(log)-2].Type)

	_, err := h.Followup(context.Background(), event.Text("anything new?"), event.Source{Kind: event.SourceUser})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, h.Activation().WhenIdle(ctx))
	var last wireRequest
	got := srv.Received()
	require.NoError(t, json.Unmarshal(got[len(got)-1].Body, &last))
	var contents []string
	for _, m := range last.Messages {
		if m.Role == "user" {
			contents = append(contents, m.Content)
		}
	}
	require.Equal(t, []string{"delegate in the background", kidNotice, "anything new?"}, contents)
	require.Equal(t, 1, strings.Count(string(got[len(got)-1].Body), "background task subagent-1"), "announced once")
}

// A task that ends unread during its agent's turn is held for the turn's
// next step, logged before that step's step/start.
func TestAnUnreadTaskEndDuringATurnPrecedesTheNextStep(t *testing.T) {
	var agents *modelagent.Agents
	srv := llmtest.NewServer(
		call("c1", "subagent", `{"description": "kid", "prompt": "Say CHILD.", "run_in_background": true}`),
		afterSettled(&agents, "subagent-1", call("c2", "task_list", `{}`)),
		llmtest.Stream(llmtest.Say("DONE")),
	)
	defer srv.Close()
	srv.Route(func(r llmtest.Received) bool { return isKid(r.Body) }, llmtest.Stream(llmtest.Say("CHILD")))
	var r *rig
	r, agents = newTaskRig(t, srv)
	h := r.turn(t, "11111111-1111-4111-8111-111111111111", "delegate in the background")
	log := events(t, h.Session())
	at := noticeAt(t, log, kidNotice)
	require.Equal(t, []string{"step/end", "user/message", "step/start"}, types(log[at-1:at+2]))
	require.Equal(t, float64(3), log[at+1].Data["step"], "before the third step")
}

// A task that ends unread during its agent's last step is logged before
// the turn's turn/end.
func TestAnUnreadTaskEndDuringTheLastStepPrecedesTurnEnd(t *testing.T) {
	var agents *modelagent.Agents
	srv := llmtest.NewServer(
		call("c1", "subagent", `{"description": "kid", "prompt": "Say CHILD.", "run_in_background": true}`),
		afterSettled(&agents, "subagent-1", llmtest.Stream(llmtest.Say("DONE"))),
	)
	defer srv.Close()
	srv.Route(func(r llmtest.Received) bool { return isKid(r.Body) }, llmtest.Stream(llmtest.Say("CHILD")))
	var r *rig
	r, agents = newTaskRig(t, srv)
	h := r.turn(t, "11111111-1111-4111-8111-111111111111", "delegate in the background")
	log := events(t, h.Session())
	at := noticeAt(t, log, kidNotice)
	require.Equal(t, []string{"step/end", "user/message", "turn/end"}, types(log[at-1:at+2]))
}

// A background delegation without a label registers nothing; a wait is
// checked for its task before its timeout, and a timed-out wait leaves the
// task running.
func TestTaskArgumentsAreCheckedInTheOriginalsOrder(t *testing.T) {
	srv := llmtest.NewServer(
		call("c1", "subagent", `{"description": "", "prompt": "Say CHILD.", "run_in_background": true}`),
		call("c2", "task_output", `{"task_id": "subagent-1", "wait": true, "timeout_ms": 0}`),
		call("c3", "subagent", `{"description": "kid", "prompt": "Say CHILD.", "run_in_background": true}`),
		call("c4", "task_output", `{"task_id": "subagent-1", "wait": true, "timeout_ms": -2.5}`),
		call("c5", "task_output", `{"task_id": "subagent-1", "wait": true, "timeout_ms": 1}`),
		call("c6", "task_kill", `{"task_id": "subagent-1"}`),
		llmtest.Stream(llmtest.Say("DONE")),
	)
	defer srv.Close()
	defer holdChildReplies(srv)()
	r, _ := newTaskRig(t, srv)
	h := r.turn(t, "11111111-1111-4111-8111-111111111111", "check the arguments")
	require.Equal(t, []string{
		"Error: invalid task label: expected a non-empty string",
		"Error: unknown task subagent-1",
		"started background subagent task subagent-1",
		"Error: invalid wait timeout: expected a positive number of milliseconds, got -2.5",
		"(no new output)\n[status: running]",
		"requested cancellation of task subagent-1",
	}, toolResults(t, events(t, h.Session())))
}

// holdChildReplies makes srv hold every child's model call until the
// returned release is called, so a background child stays running.
func holdChildReplies(srv *llmtest.Server) (release func()) {
	never := make(chan struct{})
	srv.Route(func(r llmtest.Received) bool { return isKid(r.Body) }, gated(never, llmtest.Say("CHILD")))
	return func() { close(never) }
}

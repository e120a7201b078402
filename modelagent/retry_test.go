package modelagent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/llm"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/modelagent"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/dsh-actors/dsh-actors/subagent"
)

// empty is a response with no content and a zero usage: the client reports
// it as an error finish with code EMPTY_RESPONSE.
func empty() llmtest.Behavior {
	return llmtest.Stream(llmtest.Response{Usage: &llmtest.Usage{}})
}

const (
	emptyFailure = `{"message":"model returned a completed response with no content","code":"EMPTY_RESPONSE"}`
	rigPolicyKey = `"policyKey":"[\"normal\",2,[\"EMPTY_RESPONSE\",\"RATE_LIMIT\",\"SERVER\"],1,1000,0]"`
)

// retryRecord is the llm/retry of the rig's provider and policy.
func retryRecord(turn, retry int, delayMs string, failure string) string {
	return `{"turn":` + itoa(turn) + `,"step":1,"provider":"deepseek-official","mode":"normal",` + rigPolicyKey +
		`,"retry":` + itoa(retry) + `,"maxRetries":2,"delayMs":` + delayMs + `,"failure":` + failure + `}`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// raws is the data of each event, in order.
func raws(events []logged) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Type + " " + e.Raw
	}
	return out
}

// TestAFailedCallIsRetriedAsANewTurn checks the original's retry shape
// (its fixture empty-response-retry): the failed step ends, llm/retry is
// logged, the turn ends in error naming that step, and a retry turn with
// no new message and no repeated request header runs the call again from
// step 1.
func TestAFailedCallIsRetriedAsANewTurn(t *testing.T) {
	srv := llmtest.NewServer(empty(), llmtest.Stream(llmtest.Say("ok")))
	defer srv.Close()
	r := newRig(t, llmtest.DeepSeekOn(srv, 0))
	log := events(t, r.turn(t, "retry", "hi").Session())
	got := raws(log)
	require.Len(t, got, 20, "%s", strings.Join(got, "\n"))
	require.Equal(t, `turn/start {"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}`, got[0])
	require.Equal(t, "user/message", log[1].Type)
	require.Equal(t, `step/start {"turn":1,"step":1}`, got[2])
	require.True(t, strings.HasPrefix(got[3], `request/header {"header":{"config":{"provider":"deepseek-official","model":"deepseek-v4-flash"`), got[3])
	require.Contains(t, got[3], `"reason":"initial"}`)
	require.Equal(t, "request/context", log[4].Type)
	require.Equal(t, []string{
		`assistant/chunk {"turn":1,"step":1,"chunk":{"type":"usage","usage":{"inputTokens":0,"outputTokens":0}}}`,
		`assistant/chunk {"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"error","failure":` + emptyFailure + `}}}`,
		`step/end {"turn":1,"step":1}`,
		`llm/retry ` + retryRecord(1, 1, "1", emptyFailure),
		`turn/end {"turn":1,"reason":{"kind":"error","step":1,"failure":` + emptyFailure + `}}`,
		`turn/start {"turn":2,"trigger":{"kind":"retry"}}`,
		`step/start {"turn":2,"step":1}`,
	}, got[5:12], "seqs 5-11 (the original's 7-12 and the retry turn's first step)")
	require.Equal(t, []string{"assistant/chunk", "assistant/chunk", "assistant/chunk", "assistant/chunk", "assistant/chunk",
		"assistant/message", "step/end", "turn/end"}, types(log[12:]))
	require.Equal(t, `{"turn":2,"step":1}`, log[18].Raw)
	require.Equal(t, `{"turn":2,"reason":{"kind":"completed"}}`, log[19].Raw)
	require.Len(t, ofType(log, "request/header"), 1, "no repeated header")
	require.Len(t, ofType(log, "user/message"), 1, "no new message")

	records, err := query.New(r.rt.Sessions()).ListEvents(context.Background(), "retry")
	require.NoError(t, err, "the session query's reader rules accept the chain")
	require.Len(t, records, len(log))

	received := srv.Received()
	require.Len(t, received, 2)
	require.Equal(t, string(received[0].Body), string(received[1].Body), "the retry sends the same request")
}

// TestARetryChainEndsWhenMaxRetriesIsReached: each retry turn's llm/retry
// counts on from the last one of the chain; the failure after the last
// retry ends its turn in error with no llm/retry and no further turn.
func TestARetryChainEndsWhenMaxRetriesIsReached(t *testing.T) {
	srv := llmtest.NewServer(llmtest.RateLimited(0), empty(), llmtest.Status(503, `{"error":{"message":"busy"}}`))
	defer srv.Close()
	r := newRig(t, llmtest.DeepSeekOn(srv, 0))
	log := events(t, r.turn(t, "exhausted", "hi").Session())
	var starts, retries, ends []string
	for _, e := range log {
		switch e.Type {
		case "turn/start":
			starts = append(starts, e.Raw)
		case "llm/retry":
			retries = append(retries, e.Raw)
		case "turn/end":
			ends = append(ends, e.Raw)
		}
	}
	require.Equal(t, []string{
		`{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}`,
		`{"turn":2,"trigger":{"kind":"retry"}}`,
		`{"turn":3,"trigger":{"kind":"retry"}}`,
	}, starts)
	rateLimited := `{"message":"Rate limit reached","code":"RATE_LIMIT","status":429,"requestId":"req-429"}`
	require.Equal(t, []string{retryRecord(1, 1, "1", rateLimited), retryRecord(2, 2, "2", emptyFailure)}, retries)
	require.Equal(t, `{"turn":3,"reason":{"kind":"error","step":1,"failure":{"message":"busy: HTTP 503 from POST `+srv.URL+`/chat/completions","code":"SERVER","status":503}}}`, ends[2],
		"the logged message is the cause chain, which names the status and the URL")
	require.Equal(t, "turn/end", log[len(log)-1].Type)
	require.Len(t, srv.Received(), 3)
}

// TestASuccessfulCallResetsTheRetryCount: a retry turn whose first call
// succeeds (a tool call) starts a new count for a later failure.
func TestASuccessfulCallResetsTheRetryCount(t *testing.T) {
	client := llmtest.NewClient(
		llmtest.Fail(&llm.Error{Failure: vocab.Failure{Message: "down", Code: "SERVER", Status: 500}}),
		llmtest.Reply(llmtest.CallTools(llmtest.Call{ID: "c1", Name: "list_agents", Args: []string{"{}"}})),
		llmtest.Fail(&llm.Error{Failure: vocab.Failure{Message: "down", Code: "SERVER", Status: 500}}),
		llmtest.Reply(llmtest.Say("done")),
	)
	r := newRig(t, client)
	log := events(t, r.turn(t, "reset", "hi").Session())
	down := `{"message":"down","code":"SERVER","status":500}`
	retries := ofType(log, "llm/retry")
	require.Len(t, retries, 2)
	require.Equal(t, retryRecord(1, 1, "1", down), retries[0].Raw)
	require.Equal(t, strings.Replace(retryRecord(2, 1, "1", down), `"step":1`, `"step":2`, 1), retries[1].Raw)
	require.Equal(t, `{"turn":3,"reason":{"kind":"completed"}}`, log[len(log)-1].Raw)
	require.Zero(t, client.Remaining())
}

// TestCancellingDuringTheRetryWait: a cancel while the retry waits means
// no retry turn; llm/retry stays and the turn ends aborted. The next
// message starts a new chain (its retry counts from 1).
func TestCancellingDuringTheRetryWait(t *testing.T) {
	client := llmtest.NewClient(
		llmtest.Fail(&llm.Error{Failure: vocab.Failure{Message: "down", Code: "SERVER", Status: 500}}),
		llmtest.Fail(&llm.Error{Failure: vocab.Failure{Message: "down", Code: "SERVER", Status: 500}}),
		llmtest.Reply(llmtest.Say("ok")),
	)
	slow := rigRetry()
	slow.InitialDelayMs, slow.MaxDelayMs = 3_600_000, 3_600_000 // only a cancel ends the wait
	r := newRigRetrying(t, client, slow)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	waiting := make(chan struct{}, 2)
	defer r.rt.Sessions().Subscribe(func(c session.Change) {
		if c.Kind == session.Appended && c.Header.ID == "wait" && c.Event.Type == vocab.TypeLLMRetry {
			waiting <- struct{}{}
		}
	})()
	h, err := r.rt.StartAgent(ctx, parentSpec("wait"))
	require.NoError(t, err)
	_, err = h.Followup(ctx, event.Text("hi"), event.Source{Kind: event.SourceUser})
	require.NoError(t, err)
	testkit.Receive(t, waiting, "the first turn's llm/retry")
	h.Activation().Cancel(agent.CancelCause{Kind: agent.CauseUser}, false)
	require.NoError(t, h.Activation().WhenIdle(ctx))
	log := events(t, h.Session())
	require.Equal(t, []string{"turn/start", "user/message", "step/start", "request/header", "request/context",
		"step/end", "llm/retry", "turn/end"}, types(log))
	require.Equal(t, `{"turn":1,"reason":{"kind":"aborted"}}`, log[7].Raw)

	_, err = h.Followup(ctx, event.Text("again"), event.Source{Kind: event.SourceUser})
	require.NoError(t, err)
	testkit.Receive(t, waiting, "the second turn's llm/retry")
	h.Activation().Cancel(agent.CancelCause{Kind: agent.CauseUser}, false)
	require.NoError(t, h.Activation().WhenIdle(ctx))
	retries := ofType(events(t, h.Session()), "llm/retry")
	require.Len(t, retries, 2)
	require.Contains(t, retries[1].Raw, `{"turn":2,"step":1,`)
	require.Contains(t, retries[1].Raw, `"retry":1,`, "a new message starts a new chain")
}

// TestAChildsRetryChainSettlesWithItsLastTurn: a foreground child whose
// first call failed and was retried returns the retry turn's answer; a
// background child's epoch ends completed after its retry chain, its log
// holds both turns, and list_agents lists it complete.
func TestAChildsRetryChainSettlesWithItsLastTurn(t *testing.T) {
	srv := llmtest.NewServer(
		llmtest.Stream(llmtest.CallTools(llmtest.Call{ID: "call_fg", Name: "subagent",
			Args: []string{`{"description": "count", "prompt": "Count to two."}`}})),
		llmtest.Stream(llmtest.CallTools(llmtest.Call{ID: "call_bg", Name: "subagent",
			Args: []string{`{"description": "greet", "prompt": "Say HI.", "run_in_background": true}`}})),
		llmtest.Stream(llmtest.Say("started")),
		llmtest.Stream(llmtest.CallTools(llmtest.Call{ID: "call_list", Name: "list_agents", Args: []string{"{}"}})),
		llmtest.Stream(llmtest.Say("listed")),
	)
	defer srv.Close()
	srv.Route(func(r llmtest.Received) bool {
		return bytes.Contains(r.Body, []byte(`{"role":"user","content":"Count to two."}`))
	},
		empty(), llmtest.Stream(llmtest.Say("one two")))
	srv.Route(func(r llmtest.Received) bool {
		return bytes.Contains(r.Body, []byte(`{"role":"user","content":"Say HI."}`))
	},
		empty(), llmtest.Stream(llmtest.Say("HI")))
	r := newRig(t, llmtest.DeepSeekOn(srv, 0))
	ends := make(chan manager.RunEndInfo, 4)
	defer r.service.Subscribe(func(e subagent.Event) {
		if end, ok := e.(*subagent.EndEvent); ok {
			ends <- end.RunEndInfo
		}
	})()

	h := r.turn(t, "retry-parent", "delegate")
	results := ofType(events(t, h.Session()), "tool/result")
	require.Len(t, results, 2)
	require.Contains(t, results[0].Raw, `"content":[{"type":"text","text":"one two"}],"isError":false`)
	childID := startedID.FindStringSubmatch(results[1].Raw)[1]

	var bg manager.RunEndInfo
	for end := range ends {
		if end.ID == childID {
			bg = end
			break
		}
	}
	require.Equal(t, agent.Completed, bg.StopReason)
	require.Equal(t, event.Text("HI"), bg.LastAssistantMessage)
	waitDisposed(t, r, childID)
	child, err := query.New(r.rt.Sessions()).ReadSession(context.Background(), childID)
	require.NoError(t, err)
	var turns []string
	for _, e := range child.Events {
		if e.Type == vocab.TypeTurnStart || e.Type == vocab.TypeTurnEnd {
			turns = append(turns, e.Type+" "+string(e.Data))
		}
	}
	require.Equal(t, []string{
		`turn/start {"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}`,
		`turn/end {"turn":1,"reason":{"kind":"error","step":1,"failure":` + emptyFailure + `}}`,
		`turn/start {"turn":2,"trigger":{"kind":"retry"}}`,
		`turn/end {"turn":2,"reason":{"kind":"completed"}}`,
	}, turns)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = h.Followup(ctx, event.Text("list them"), event.Source{Kind: event.SourceUser})
	require.NoError(t, err)
	require.NoError(t, h.Activation().WhenIdle(ctx))
	results = ofType(events(t, h.Session()), "tool/result")
	require.Contains(t, results[2].Raw, `"text":"`+childID+` [complete] — greet"`)
}

// waitDisposed waits until the live agent id has been disposed.
func waitDisposed(t *testing.T, r *rig, id string) {
	t.Helper()
	if h := r.rt.Registry().Get(id); h != nil {
		select {
		case <-h.Disposed():
		case <-time.After(time.Minute):
			t.Fatalf("%s was not disposed", id)
		}
	}
}

// TestAColdResumeAfterACrashMidChain: a log that ended inside a retry
// turn loads with that turn interrupted; the next message is a new
// message turn whose retries count from 1 again, and the retry turn
// after it continues the turn numbers.
func TestAColdResumeAfterACrashMidChain(t *testing.T) {
	srv := llmtest.NewServer(empty(), llmtest.Stream(llmtest.Say("ok")))
	defer srv.Close()
	r := newRig(t, llmtest.DeepSeekOn(srv, 0))
	lines := []struct{ typ, data string }{
		{"turn/start", `{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}`},
		{"user/message", `{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"role":"user","id":"0b0e3c2e-7f43-4d59-9d4c-6d1c5e0a9f10"}`},
		{"step/start", `{"turn":1,"step":1}`},
		{"request/header", `{"header":{"config":{"provider":"deepseek-official","model":"deepseek-v4-flash"}},"reason":"initial"}`},
		{"step/end", `{"turn":1,"step":1}`},
		{"llm/retry", retryRecord(1, 1, "1", emptyFailure)},
		{"turn/end", `{"turn":1,"reason":{"kind":"error","step":1,"failure":` + emptyFailure + `}}`},
		{"turn/start", `{"turn":2,"trigger":{"kind":"retry"}}`},
		{"step/start", `{"turn":2,"step":1}`},
	}
	var crashed []session.Event
	for i, l := range lines {
		e := session.Event{Type: l.typ, Seq: int64(i), Time: 1764522000000, Data: []byte(l.data)}
		if l.typ == "user/message" {
			e.SurfaceOp = []byte(`"append"`)
		}
		crashed = append(crashed, e)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, r.rt.Sessions().Store().Create(ctx, session.Header{ID: "crashed", Cwd: "/work"}, crashed))
	h, err := r.rt.ResumeAgent(ctx, "crashed", parent.Spec{})
	require.NoError(t, err)
	_, err = h.Followup(ctx, event.Text("again"), event.Source{Kind: event.SourceUser})
	require.NoError(t, err)
	require.NoError(t, h.Activation().WhenIdle(ctx))
	got := raws(events(t, h.Session()))
	require.Equal(t, []string{`step/end {"turn":2,"step":1}`, `turn/end {"turn":2,"reason":{"kind":"interrupted"}}`},
		got[len(lines):len(lines)+2], "the repair closes the retry turn")
	var retries, starts []string
	for _, line := range got[len(lines):] {
		switch {
		case strings.HasPrefix(line, "llm/retry "):
			retries = append(retries, strings.TrimPrefix(line, "llm/retry "))
		case strings.HasPrefix(line, "turn/start "):
			starts = append(starts, strings.TrimPrefix(line, "turn/start "))
		}
	}
	require.Equal(t, []string{retryRecord(3, 1, "1", emptyFailure)}, retries, "a new chain counts from 1")
	require.Equal(t, []string{`{"turn":3,"trigger":{"kind":"message","source":{"kind":"user"}}}`, `{"turn":4,"trigger":{"kind":"retry"}}`},
		starts, "no retry turn resumes: the message opens turn 3")
	require.Equal(t, `turn/end {"turn":4,"reason":{"kind":"completed"}}`, got[len(got)-1])
}

// TestTheRetryDelayIsLoggedAsComputed: delayMs is the policy's delay with
// its fraction, as the original logs it; the wait rounds it to the
// millisecond.
func TestTheRetryDelayIsLoggedAsComputed(t *testing.T) {
	client := llmtest.NewClient(
		llmtest.Fail(&llm.Error{Failure: vocab.Failure{Message: "down", Code: "SERVER", Status: 500}}),
		llmtest.Reply(llmtest.Say("ok")),
	)
	fractional := rigRetry()
	fractional.InitialDelayMs = 2.5
	r := newRigRetrying(t, client, fractional)
	retries := ofType(events(t, r.turn(t, "fraction", "hi").Session()), "llm/retry")
	require.Len(t, retries, 1)
	require.Contains(t, retries[0].Raw, `"retry":1,"maxRetries":2,"delayMs":2.5,"failure":`)
}

// TestDisposingDuringTheRetryWait: the agent's disposal during the wait
// ends the turn disposed, llm/retry kept, and opens no retry turn.
func TestDisposingDuringTheRetryWait(t *testing.T) {
	client := llmtest.NewClient(llmtest.Fail(&llm.Error{Failure: vocab.Failure{Message: "down", Code: "SERVER", Status: 500}}))
	slow := rigRetry()
	slow.InitialDelayMs, slow.MaxDelayMs = 3_600_000, 3_600_000 // only the disposal ends the wait
	r := newRigRetrying(t, client, slow)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	waiting := make(chan struct{}, 1)
	defer r.rt.Sessions().Subscribe(func(c session.Change) {
		if c.Kind == session.Appended && c.Header.ID == "disposed" && c.Event.Type == vocab.TypeLLMRetry {
			waiting <- struct{}{}
		}
	})()
	h, err := r.rt.StartAgent(ctx, parentSpec("disposed"))
	require.NoError(t, err)
	_, err = h.Followup(ctx, event.Text("hi"), event.Source{Kind: event.SourceUser})
	require.NoError(t, err)
	testkit.Receive(t, waiting, "the llm/retry before the dispose")
	require.NoError(t, h.Dispose(ctx))
	log := events(t, h.Session())
	require.Equal(t, []string{"llm/retry", "turn/end"}, types(log[len(log)-2:]))
	require.Equal(t, `{"turn":1,"reason":{"kind":"disposed"}}`, log[len(log)-1].Raw)
}

// TestAnAlwaysPolicysRetryHasNoMaxRetries: in mode "always" llm/retry
// carries no maxRetries (the key between retry and delayMs is absent) and
// the always policy's key, and a code the normal policy would not retry
// (AUTH) is retried.
func TestAnAlwaysPolicysRetryHasNoMaxRetries(t *testing.T) {
	client := llmtest.NewClient(
		llmtest.Fail(&llm.Error{Failure: vocab.Failure{Message: "bad key", Code: "AUTH", Status: 401}}),
		llmtest.Reply(llmtest.Say("ok")),
	)
	always := modelagent.RetryPolicy{Mode: modelagent.RetryAlways, InitialDelayMs: 1, MaxDelayMs: 1000}
	r := newRigRetrying(t, client, always)
	log := events(t, r.turn(t, "always", "hi").Session())
	retries := ofType(log, "llm/retry")
	require.Len(t, retries, 1)
	require.Equal(t, `{"turn":1,"step":1,"provider":"deepseek-official","mode":"always","policyKey":"[\"always\",1,1000,0]",`+
		`"retry":1,"delayMs":1,"failure":{"message":"bad key","code":"AUTH","status":401}}`, retries[0].Raw)
	ends := ofType(log, "turn/end")
	require.Len(t, ends, 2)
	require.Equal(t, `{"turn":2,"reason":{"kind":"completed"}}`, ends[1].Raw)
}

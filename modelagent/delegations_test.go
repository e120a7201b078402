package modelagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
	"github.com/dsh-actors/dsh-actors/modelagent"
	"github.com/dsh-actors/dsh-actors/subagent"
)

// probe is a one-shot provider of its own: a prompt "wait" runs until its
// context is cancelled (recording the cause), "fail" fails to start, any
// other is answered "probe: <prompt>" at once.
type probe struct {
	mu      sync.Mutex
	causes  []string
	depths  []*int
	started int
}

func (p *probe) Name() string                        { return "probe" }
func (p *probe) Capabilities() subagent.Capabilities { return subagent.Capabilities{} }
func (p *probe) InheritsParentContext() bool         { return false }
func (p *probe) Start(ctx context.Context, req subagent.StartRequest) (*subagent.Run, error) {
	p.mu.Lock()
	p.depths = append(p.depths, req.MaxDepth)
	p.started++
	p.mu.Unlock()
	prompt := event.TextOf(req.Prompt)
	if prompt == "fail" {
		return nil, errors.New("no room for another agent")
	}
	run, settle := subagent.NewRun(uuid.NewString(), nil, func(context.Context) error { return nil })
	if prompt != "wait" {
		settle(subagent.Result{Output: event.Text("probe: " + prompt), StopReason: agent.Completed}, nil)
		return run, nil
	}
	go func() {
		<-ctx.Done()
		p.mu.Lock()
		p.causes = append(p.causes, context.Cause(ctx).Error())
		p.mu.Unlock()
		settle(subagent.Result{Output: []event.Block{}, StopReason: agent.Aborted}, nil)
	}()
	return run, nil
}

func (p *probe) seen() (causes []string, depths []*int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.causes...), append([]*int(nil), p.depths...)
}

// toolsOf are the tools of a request: name to {description, parameters}.
func toolsOf(t *testing.T, body []byte) (names []string, specs map[string]string) {
	t.Helper()
	var req struct {
		Tools []struct {
			Function json.RawMessage `json:"function"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	specs = map[string]string{}
	for _, tool := range req.Tools {
		var f struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		}
		require.NoError(t, json.Unmarshal(tool.Function, &f))
		names = append(names, f.Name)
		specs[f.Name] = f.Description + "\n" + string(f.Parameters)
	}
	return names, specs
}

// A delegation mounts the subagent tool again over a provider of one's
// own: the same schema and wording, a foreground run, one-shot background
// tasks whose kill reason reaches the run (the default one without a
// reason, "owner disposed" when the owner goes), and no cap sent to a
// provider that does not enforce one. A delegation to a provider that is
// not registered offers no tool; once a provider is removed its tool goes.
func TestADelegationMountsTheSubagentToolOverAProviderOfOnesOwn(t *testing.T) {
	p := &probe{}
	t.Cleanup(func() { // after the rig's runtime closed: the owner is disposed
		causes, _ := p.seen()
		require.Equal(t, []string{"changed my mind", "background subagent task killed", "owner disposed"}, causes)
	})
	srv := llmtest.NewServer(
		call("c1", "subagent_probe", `{"description": "fg", "prompt": "hello"}`),
		call("c2", "subagent_probe", `{"description": "bg", "prompt": "wait", "run_in_background": true}`),
		call("c3", "task_kill", `{"task_id": "subagent-1", "reason": "changed my mind"}`),
		call("c4", "task_output", `{"task_id": "subagent-1", "wait": true}`),
		call("c5", "subagent_probe", `{"description": "bg2", "prompt": "wait", "run_in_background": true}`),
		call("c6", "task_kill", `{"task_id": "subagent-2"}`),
		call("c7", "task_output", `{"task_id": "subagent-2", "wait": true}`),
		call("c8", "subagent_probe", `{"description": "left", "prompt": "wait", "run_in_background": true}`),
		llmtest.Stream(llmtest.Say("DONE")),
		llmtest.Stream(llmtest.Say("AGAIN")), // the second agent, after the probe's removal
	)
	defer srv.Close()
	retry := rigRetry()
	agents := modelagent.NewOver(modelagent.Config{Model: "deepseek-v4-flash", Retry: &retry, BackgroundTasks: true,
		Delegations: map[string]string{"subagent_probe": "probe", "subagent_gone": "missing"}},
		llmtest.DeepSeekOn(srv, 0), func() float64 { return 0.5 })
	r := rigOf(t, agents)
	remove, err := r.service.RegisterProvider(p)
	require.NoError(t, err)

	h := r.turn(t, "11111111-1111-4111-8111-111111111111", "delegate to the probe")
	require.Equal(t, []string{
		"probe: hello",
		"started background subagent task subagent-1",
		"requested cancellation of task subagent-1",
		"(no new output)\n[status: killed]",
		"started background subagent task subagent-2",
		"requested cancellation of task subagent-2",
		"(no new output)\n[status: killed]",
		"started background subagent task subagent-3",
	}, toolResults(t, events(t, h.Session())))
	_, depths := p.seen()
	require.Equal(t, []*int{nil, nil, nil, nil}, depths, "no cap to a provider without depthLimit")

	names, specs := toolsOf(t, srv.Received()[0].Body)
	require.Equal(t, []string{"list_agents", "send_message", "subagent", "subagent_fork", "subagent_probe",
		"task_kill", "task_list", "task_output"}, names)
	require.Equal(t, specs["subagent"], specs["subagent_probe"], "the subagent tool's schema and wording")

	remove()
	r.turn(t, "22222222-2222-4222-8222-222222222222", "anything")
	got := srv.Received()
	names, _ = toolsOf(t, got[len(got)-1].Body)
	require.NotContains(t, names, "subagent_probe", "gone with its provider")
}

// Bound to a provider that cannot prepare continuable children, the
// subagent tool itself runs foreground over it and words its background
// parameter as a task; without background tasks such a background call is
// refused with the original's text.
func TestTheSubagentToolRebindsToAOneShotProvider(t *testing.T) {
	srv := llmtest.NewServer(
		call("c1", "subagent", `{"description": "fg", "prompt": "hello"}`),
		call("c2", "subagent", `{"description": "bg", "prompt": "wait", "run_in_background": true}`),
		llmtest.Stream(llmtest.Say("DONE")),
	)
	defer srv.Close()
	retry := rigRetry()
	agents := modelagent.NewOver(modelagent.Config{Model: "deepseek-v4-flash", Retry: &retry,
		Delegations: map[string]string{"subagent": "probe"}}, llmtest.DeepSeekOn(srv, 0), func() float64 { return 0.5 })
	r := rigOf(t, agents)
	_, err := r.service.RegisterProvider(&probe{})
	require.NoError(t, err)
	h := r.turn(t, "11111111-1111-4111-8111-111111111111", "delegate")
	require.Equal(t, []string{
		"probe: hello",
		"Error: background tasks unavailable: load @deepseek-ai/dsh-tasks and @deepseek-ai/dsh-tool-tasks",
	}, toolResults(t, events(t, h.Session())))
	names, specs := toolsOf(t, srv.Received()[0].Body)
	require.Equal(t, []string{"list_agents", "send_message", "subagent", "subagent_fork"}, names)
	require.Contains(t, specs["subagent"], "collect with `task_output` and stop with `task_kill`.")
	require.Contains(t, specs["subagent_fork"], "send it more work with send_message.", "fork stays continuable")
}

func TestDelegationsAreChecked(t *testing.T) {
	for delegations, want := range map[string]string{
		`{"send_message": "x"}`: `delegation tool name "send_message" is a built-in tool's`,
		`{"task_kill": "x"}`:    `delegation tool name "task_kill" is a built-in tool's`,
		`{"bad name": "x"}`:     `delegation tool name "bad name" must match`,
		`{"mcp__a__b": "x"}`:    `delegation tool name "mcp__a__b" must match`,
		`{"ok": ""}`:            `delegation tool "ok" names no provider`,
	} {
		var m map[string]string
		require.NoError(t, json.Unmarshal([]byte(delegations), &m))
		_, err := modelagent.NewOverChecked(modelagent.Config{Delegations: m}, llmtest.NewClient(), nil)
		require.ErrorContains(t, err, want, delegations)
	}
	_, err := modelagent.NewOverChecked(modelagent.Config{Delegations: map[string]string{"mine": "x"},
		Tools: []modelagent.Tool{{Name: "mine", Run: func(context.Context, modelagent.ToolCall) (string, error) { return "", nil }}}},
		llmtest.NewClient(), nil)
	require.ErrorContains(t, err, `tool name "mine" is already taken`)
}

// Closing the agents cancels the tasks still running, whoever owns them,
// and returns once each has settled.
func TestClosingTheAgentsDisposesTheirTasks(t *testing.T) {
	p := &probe{}
	srv := llmtest.NewServer(
		call("c1", "subagent_probe", `{"description": "left", "prompt": "wait", "run_in_background": true}`),
		llmtest.Stream(llmtest.Say("DONE")),
	)
	defer srv.Close()
	retry := rigRetry()
	agents := modelagent.NewOver(modelagent.Config{Model: "deepseek-v4-flash", Retry: &retry, BackgroundTasks: true,
		Delegations: map[string]string{"subagent_probe": "probe"}}, llmtest.DeepSeekOn(srv, 0), func() float64 { return 0.5 })
	r := rigOf(t, agents)
	_, err := r.service.RegisterProvider(p)
	require.NoError(t, err)
	r.turn(t, "11111111-1111-4111-8111-111111111111", "delegate and leave it")
	require.NoError(t, agents.Close())
	causes, _ := p.seen()
	require.Equal(t, []string{"tasks service disposed"}, causes)
	require.Nil(t, agents.TaskSettled("subagent-1"), "forgotten")
}

// A background task whose run fails to start ends failed, its detail the
// error as thrown; a foreground call fails with the error.
func TestATaskWhoseRunFailsToStartEndsFailed(t *testing.T) {
	srv := llmtest.NewServer(
		call("c1", "subagent_probe", `{"description": "doomed", "prompt": "fail", "run_in_background": true}`),
		call("c2", "task_output", `{"task_id": "subagent-1", "wait": true}`),
		call("c3", "subagent_probe", `{"description": "doomed", "prompt": "fail"}`),
		llmtest.Stream(llmtest.Say("DONE")),
	)
	defer srv.Close()
	retry := rigRetry()
	agents := modelagent.NewOver(modelagent.Config{Model: "deepseek-v4-flash", Retry: &retry, BackgroundTasks: true,
		Delegations: map[string]string{"subagent_probe": "probe"}}, llmtest.DeepSeekOn(srv, 0), func() float64 { return 0.5 })
	r := rigOf(t, agents)
	_, err := r.service.RegisterProvider(&probe{})
	require.NoError(t, err)
	h := r.turn(t, "11111111-1111-4111-8111-111111111111", "delegate")
	require.Equal(t, []string{
		"started background subagent task subagent-1",
		"(no new output)\n[status: failed, Error: no room for another agent]",
		"Error: no room for another agent",
	}, toolResults(t, events(t, h.Session())))
}

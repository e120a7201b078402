package modelagent_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/llm"
	"github.com/dsh-actors/dsh-actors/modelagent"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/dsh-actors/dsh-actors/subagent"
)

// TestMain runs the tests under the leak check, or, started as the
// stdio MCP server of the MCP tests (mcpServerEnv set), serves it.
func TestMain(m *testing.M) {
	if os.Getenv(mcpServerEnv) != "" {
		serveStdioMCP()
		return
	}
	goleak.VerifyTestMain(m)
}

// rig is a runtime over a JSONL store whose agents are model agents.
type rig struct {
	root    string
	rt      *actors.Runtime
	service *subagent.Service
}

// rigRetry is the rig's retry policy: the default codes, a 1 ms delay.
func rigRetry() modelagent.RetryPolicy {
	return modelagent.RetryPolicy{Mode: modelagent.RetryNormal, MaxRetries: 2, RetryableCodes: []string{"EMPTY_RESPONSE", "RATE_LIMIT", "SERVER"}, InitialDelayMs: 1, MaxDelayMs: 1000}
}

func newRig(t testing.TB, client llm.Client) *rig { return newRigRetrying(t, client, rigRetry()) }

// rigOf is a rig whose agents are agents: a runtime over a temporary
// store with the spawn and fork providers, closed at the test's end.
func rigOf(t testing.TB, agents *modelagent.Agents) *rig {
	t.Helper()
	provider, model := agents.Route()
	root := t.TempDir()
	rt, err := actors.New(actors.Options{Root: root, NewAgent: agents.Factory, Provider: provider, Model: model})
	require.NoError(t, err)
	service, err := subagent.New(rt, query.New(rt.Sessions()))
	require.NoError(t, err)
	for _, p := range []subagent.Provider{subagent.NewSpawn(rt), subagent.NewFork(rt)} {
		_, err := service.RegisterProvider(p)
		require.NoError(t, err)
	}
	agents.Bind(rt, service)
	t.Cleanup(func() { require.NoError(t, rt.Close(context.Background())) })
	return &rig{root: root, rt: rt, service: service}
}

// newRigRetrying is newRig with another retry policy.
func newRigRetrying(t testing.TB, client llm.Client, retry modelagent.RetryPolicy) *rig {
	t.Helper()
	agents := modelagent.NewOver(modelagent.Config{Model: "deepseek-v4-flash", Retry: &retry}, client,
		func() float64 { return 0.5 })
	return rigOf(t, agents)
}

// turn starts a top-level agent id, sends it prompt and waits until it is
// idle; it returns the agent.
func (r *rig) turn(t *testing.T, id, prompt string) *parent.Handle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := r.rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: id, Cwd: "/work"}})
	require.NoError(t, err)
	_, err = h.Followup(ctx, event.Text(prompt), event.Source{Kind: event.SourceUser})
	require.NoError(t, err)
	if err := h.Activation().WhenIdle(ctx); err != nil {
		for _, e := range h.Session().Events() {
			t.Logf("%d %s %s", e.Seq, e.Type, e.Data)
		}
		t.Fatal(err)
	}
	return h
}

// logged is one event of a log, its data decoded loosely.
type logged struct {
	Seq             int64
	Type            string
	Data            map[string]any
	Raw             string
	SourceEventSeqs []int64
	SurfaceOp       string
}

func events(t *testing.T, live *session.Live) []logged {
	t.Helper()
	var out []logged
	for _, e := range live.Events() {
		l := logged{Seq: e.Seq, Type: e.Type, Raw: string(e.Data), SourceEventSeqs: e.SourceEventSeqs}
		if len(e.SurfaceOp) > 0 {
			require.NoError(t, json.Unmarshal(e.SurfaceOp, &l.SurfaceOp))
		}
		_ = json.Unmarshal(e.Data, &l.Data)
		out = append(out, l)
	}
	return out
}

func types(events []logged) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Type
	}
	return out
}

// ofType returns the events of one type.
func ofType(events []logged, typ string) []logged {
	var out []logged
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func parentSpec(id string) parent.CreateSpec {
	return parent.CreateSpec{Header: session.Header{ID: id, Cwd: "/work"}}
}

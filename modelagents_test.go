package dsh

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/modelagent"
	"github.com/dsh-actors/dsh-actors/modelagent/modelagenttest"
)

// TestModelAgentsAreBoundToTheRuntime: with Options.ModelAgents every
// agent is a model agent attributed to their route, and its subagent
// tools reach the runtime's service (list_agents answers, no "requires a
// calling agent").
func TestModelAgentsAreBoundToTheRuntime(t *testing.T) {
	srv := modelagenttest.NewServer(
		modelagenttest.CallTools(modelagenttest.Call{ID: "c1", Name: modelagent.ToolListAgents, Args: []string{"{}"}}),
		modelagenttest.Say("none"),
	)
	defer srv.Close()
	agents, err := modelagent.New(modelagent.Config{BaseURL: srv.URL, APIKey: "k", Provider: "mock", Model: "m"})
	require.NoError(t, err)
	rt := open(t, Options{Dir: t.TempDir(), ModelAgents: agents})
	a, err := rt.StartAgent(bg, "assistant")
	require.NoError(t, err)
	_, err = rt.Prompt(bg, "assistant", "list them")
	require.NoError(t, err)
	require.NoError(t, a.WhenIdle(bg))
	var results []string
	for _, e := range a.h.Session().Events() {
		switch e.Type {
		case "tool/result":
			results = append(results, string(e.Data))
		case "request/header":
			var logged struct {
				Header struct {
					Config struct{ Provider, Model string }
				}
			}
			require.NoError(t, json.Unmarshal(e.Data, &logged))
			require.Equal(t, "mock m", logged.Header.Config.Provider+" "+logged.Header.Config.Model)
		}
	}
	require.Len(t, results, 1)
	require.NotContains(t, results[0], "requires a calling agent")
	require.NotContains(t, results[0], `"isError":true`)
	require.Len(t, srv.Received(), 2)
}

// TestModelAgentsReplaceTheFactoryAndRoute: Options.ModelAgents with a
// NewAgent, a Provider or a Model of its own is refused, naming the
// fields.
func TestModelAgentsReplaceTheFactoryAndRoute(t *testing.T) {
	agents, err := modelagent.New(modelagent.Config{BaseURL: "http://127.0.0.1:9", APIKey: "k", Model: "m"})
	require.NoError(t, err)
	for _, opts := range []Options{
		{ModelAgents: agents, NewAgent: agent.Scripted},
		{ModelAgents: agents, Provider: "p"},
		{ModelAgents: agents, Model: "m"},
	} {
		_, err := Open(opts)
		require.EqualError(t, err, "dsh: Options.ModelAgents replaces NewAgent, Provider and Model: set none of them")
	}
}

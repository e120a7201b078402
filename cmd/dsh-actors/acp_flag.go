package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/modelagent"
)

// acpAgents are the ACP providers --acp NAME=COMMAND names (repeatable):
// each is registered on the runtime under NAME (Options.ACPAgents), and a
// model agent gets a one-shot delegation tool "subagent_NAME" over it.
type acpAgents struct {
	configs []dsh.ACPAgent
	stderr  io.Writer
	rt      atomic.Pointer[dsh.Runtime]
}

// acpFlag adds --acp to flags; the agents' stderr goes to stderr.
func acpFlag(flags *flag.FlagSet, stderr io.Writer) *acpAgents {
	a := &acpAgents{stderr: stderr}
	flags.Var(a, "acp", "NAME=COMMAND [ARGS...]: an ACP agent command the subagent provider NAME starts for each "+
		"one-shot run (its tool is subagent_NAME); repeatable")
	return a
}

// String is the flag's value: the names given.
func (a *acpAgents) String() string {
	if a == nil {
		return ""
	}
	names := make([]string, len(a.configs))
	for i, c := range a.configs {
		names[i] = c.Name
	}
	return strings.Join(names, ",")
}

// Set reads one NAME=COMMAND [ARGS...] (arguments split at white space).
func (a *acpAgents) Set(value string) error {
	name, command, ok := strings.Cut(value, "=")
	fields := strings.Fields(command)
	if !ok || strings.TrimSpace(name) == "" || len(fields) == 0 {
		return fmt.Errorf("--acp wants NAME=COMMAND [ARGS...], got %q", value)
	}
	a.configs = append(a.configs, dsh.ACPAgent{Name: name, Command: fields[0], Args: fields[1:], Stderr: a.stderr})
	return nil
}

// options are the runtime's ACP agents (none for a nil a).
func (a *acpAgents) options() []dsh.ACPAgent {
	if a == nil {
		return nil
	}
	return a.configs
}

// bind makes rt the runtime the delegation tools run their children on.
// A nil a binds nothing.
func (a *acpAgents) bind(rt *dsh.Runtime) {
	if a != nil {
		a.rt.Store(rt)
	}
}

// tools are the model agents' delegation tools, one per provider (none
// for a nil a).
func (a *acpAgents) tools() []modelagent.Tool {
	if a == nil {
		return nil
	}
	tools := make([]modelagent.Tool, len(a.configs))
	for i, cfg := range a.configs {
		tools[i] = modelagent.Tool{
			Name: "subagent_" + cfg.Name,
			Description: "Delegate a self-contained task to the " + cfg.Name + " agent, which runs as a separate " +
				"program in its own context, and return its final result. It does not see this conversation: " +
				"give it a complete, standalone prompt. You receive only its final answer.",
			Parameters: []byte(`{"type":"object","properties":{"description":{"type":"string","description":` +
				`"A short (3-5 word) description of the delegated task, for display."},"prompt":{"type":"string",` +
				`"description":"The complete, self-contained task for the agent."}},"required":["description","prompt"]}`),
			Run: func(ctx context.Context, call modelagent.ToolCall) (string, error) {
				return a.delegate(ctx, cfg.Name, call)
			},
		}
	}
	return tools
}

// delegate runs one call of provider's tool: a one-shot run of the calling
// agent, disposed before the tool returns its text.
func (a *acpAgents) delegate(ctx context.Context, provider string, call modelagent.ToolCall) (string, error) {
	rt := a.rt.Load()
	caller, ok := rt.Agent(call.SessionID)
	if !ok {
		return "", fault.New(fault.Unauthorized, "subagent_"+provider+": the calling agent is not live", nil)
	}
	var args struct{ Prompt string }
	if err := json.Unmarshal(call.Arguments, &args); err != nil {
		return "", err
	}
	end, err := rt.Delegate(ctx, caller, provider, event.Text(args.Prompt))
	if err != nil {
		return "", err
	}
	if failure := modelagent.RunFailure(end.StopReason); failure != "" {
		return "", errors.New(failure)
	}
	return event.TextOf(end.LastAssistantMessage), nil
}

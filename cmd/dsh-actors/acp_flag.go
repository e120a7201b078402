package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	dsh "github.com/dsh-actors/dsh-actors"
)

// acpAgents are the ACP providers --acp NAME=COMMAND names (repeatable):
// each is registered on the runtime under NAME (Options.ACPAgents), and a
// model agent gets the subagent tool mounted over it as "subagent_NAME".
type acpAgents struct {
	configs []dsh.ACPAgent
	stderr  io.Writer
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

// delegations are the model agents' delegation tools over the providers,
// "subagent_NAME" for NAME (none for a nil a): the subagent tool mounted
// over each, as modelagent.Config.Delegations.
func (a *acpAgents) delegations() map[string]string {
	if a == nil {
		return nil
	}
	tools := make(map[string]string, len(a.configs))
	for _, cfg := range a.configs {
		tools["subagent_"+cfg.Name] = cfg.Name
	}
	return tools
}

package dsh

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/subagent"
	"github.com/dsh-actors/dsh-actors/subagent/acp"
)

// ACPAgent is an agent program speaking the Agent Client Protocol over
// stdio that Open registers as the subagent provider Name: each one-shot
// run through it (Delegate) starts Command with Args in Dir (the parent
// session's cwd when empty: a parent started without one, by StartAgent,
// needs Dir), denies its permission requests, and sends its stderr to
// Stderr (nil discards it). A turn the agent fails ends with the stop
// reason error and is logged to Options.Logger.
type ACPAgent struct {
	Name    string
	Command string
	Args    []string
	Dir     string
	Stderr  io.Writer
}

// registerACPAgents registers each of agents on the subagent service; a
// bad one, or a name taken (spawn, fork, another), fails naming it.
func (r *Runtime) registerACPAgents(agents []ACPAgent) error {
	for _, a := range agents {
		p, err := acp.New(acp.Config{Name: a.Name, Command: a.Command, Args: a.Args, Dir: a.Dir, Stderr: a.Stderr,
			Logger: r.actors.Logger()})
		if err == nil {
			_, err = r.subagents.RegisterProvider(p)
		}
		if err != nil {
			return fmt.Errorf("dsh: ACP agent %s: %w", a.Name, err)
		}
	}
	return nil
}

// Delegate runs prompt as one one-shot child of the exact live agent p
// through the provider named provider (an Options.ACPAgents name, say),
// waits for it to end and disposes it before returning its end: its stop
// reason and its output as LastAssistantMessage. A child that fails is an
// end whose stop reason says so, not an error; an unknown provider is
// fault.NoProvider, a stale or nil p fault.Unauthorized. It blocks until
// the child is disposed; a cancelled ctx cancels the run.
func (r *Runtime) Delegate(ctx context.Context, p *Handle, provider string, prompt []event.Block) (end agent.ChildEnd, err error) {
	if err := needParent("Delegate", p); err != nil {
		return agent.ChildEnd{}, err
	}
	run, err := r.subagents.Start(ctx, provider, subagent.StartRequest{Prompt: prompt, Parent: p.h})
	if err != nil {
		return agent.ChildEnd{}, err
	}
	defer func() { err = errors.Join(err, run.Dispose(context.WithoutCancel(ctx))) }()
	result, err := run.Result(ctx)
	if err != nil {
		return agent.ChildEnd{}, err
	}
	return agent.ChildEnd{StopReason: result.StopReason, LastAssistantMessage: result.Output}, nil
}

package dsh

import (
	"context"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
)

// TextAgent is the agent.Factory of a text-in, text-out agent: each turn
// calls reply with the text of the message that opened it and logs the
// answer as the turn's one assistant message. An error from reply fails the
// turn (stop reason error); reply should honour ctx, which is cancelled when
// the turn is. For tools, steps or children write an agent.Agent instead.
func TextAgent(reply func(ctx context.Context, prompt string) (string, error)) agent.Factory {
	return func(agent.Options) agent.Agent {
		return agent.Func(func(ctx context.Context, host agent.Host, msg event.UserMessage) (agent.StopReason, error) {
			answer, err := reply(ctx, event.TextOf(msg.Content))
			if err != nil {
				return agent.Error, err
			}
			return agent.Completed, host.Say(ctx, event.Text(answer))
		})
	}
}

// Prompt sends text to the live top-level agent id as a user message, the
// agent's next FIFO turn, and returns the accepted MessageID. It blocks
// until acceptance, not until the turn runs (the handle's WhenIdle waits
// for that). The agent must be live in this runtime (StartAgent, or
// ResumeAgent after a restart): otherwise, and for a continuable child's
// id, it fails with fault.AgentNotFound.
func (r *Runtime) Prompt(ctx context.Context, id, text string) (string, error) {
	return r.actors.Followup(ctx, id, event.Text(text), event.Source{Kind: event.SourceUser})
}

// Package actors is the runtime that owns the agents of one process: the
// session registry (and the store it opened, if any), the protoactor actor
// system with its pooled dispatcher, and the live-agent registry
// (package parent) with its event bus.
//
// New opens everything; StartAgent publishes a top-level agent over a new
// session, ResumeAgent rebuilds one from its stored log, Followup delivers a
// message to a live agent and returns its MessageID at inbox acceptance.
// Close tears the runtime down in a fixed order: the pre-close hooks
// registered with BeforeClose (the subagent manager's drain runs there),
// then every agent disposed child-first (leaves before their parents),
// then every remaining live session flushed, the store closed (when the
// runtime opened it), and only then the actor system shut down and the
// dispatcher's goroutines stopped. After Close every call fails with
// fault.Closed; a second Close is a no-op.
//
// The subagent layer installs two things: the per-agent agent.Subagents
// capability (InstallSubagents, bound to the calling agent's exact Handle)
// and, through Options.NewAgent, the factory that builds the Agent for
// every start and cold resume (agent.Scripted by default).
//
// Packages: agent (the turn contract and the scripted agent), inbox (the
// FIFO turn queue that is each actor's mailbox), actors/activation (the
// agent actor), actors/parent (the registry and the bus). Errors of the
// whole layer are *fault.Error values; match them with errors.Is against
// their fault.Code (fault.Closed, fault.InboxClosed, fault.AgentNotFound, …).
//
// API changes after the first commit (a6e3949):
//   - parent.Bus delivers on the publishing goroutine, in order per agent
//     (created, inbox events, disposed), no longer through one global
//     queue; listeners must be safe for concurrent use.
//   - Added parent.Registry.Lookup, activation.Activation.Emit and
//     inbox.Inbox.Emit.
//   - inbox.NewMessageID draws from math/rand/v2 (ChaCha8), not crypto/rand.
//   - inbox.Inbox.EndTurn runs the mailbox on the calling (turn) goroutine.
//   - turn/start is {turn, trigger:{kind:"message", source}}, logged before the user/message that opened the turn, as the
//     original's agent loop logs them.
//   - Added agent.Options fields MaxTokens, SubagentDepth, Persona,
//     ToolFilter (agent.ToolFilter), the same fields in parent.Spec, and
//     parent.Handle.Spec.
package actors

// Package dsh is where a program that embeds dsh-actors starts: Open
// returns a Runtime with everything a continuable subagent needs already
// wired — the session store (a JSONL folder, a Postgres database that
// several processes may share, or memory), the actor runtime with its
// agent factory (the keyless scripted agent unless another is given),
// the session query and catalog, and the one subagent service of that
// runtime with the "spawn" and "fork" providers registered (and each of
// Options.ACPAgents under its name).
//
// An agent is an agent.Agent built by Options.NewAgent; TextAgent makes one
// from a function from prompt text to answer text. A Runtime's methods cover
// the common flow: StartAgent publishes a top-level agent (ResumeAgent a
// stored one, OpenAgent either), Prompt gives it a user message, Spawn
// starts a continuable child of it, Send is a follow-up to that child,
// WaitChild blocks until the child's epoch ends (no polling), Children
// lists the durable catalog, and Drain stops one parent's children
// child-first (a scoped drain). After a restart ResumeAgent publishes the
// stored parent again, and its children cold-resume on their next Send,
// each rebuilt by the factory of the route its descriptor names. Inside a
// turn, agent.Host's Subagents does the same for the agent's own
// children: Spawn, Fork, Send, Wait and Children.
//
// A program needs this package, agent (to write an agent and read a
// child's end and catalog entries: agent.ChildEnd, agent.Child) and event
// (message content); errors are matched with errors.Is against the codes
// of package fault. StartAgent's Handle has the agent's ID, WhenIdle,
// Conversation and LastReply; it cannot write to the agent's log or
// dispose it.
//
// A program that serves people, as the web page does, names sessions by
// id instead of holding handles:
//   - OpenSession makes a top-level session live in a working folder,
//     resuming a stored one when SessionSpec.Resume says so; it blocks
//     until the agent is live.
//   - PromptSession gives a session a message and its source, resuming a
//     stored session first; it blocks until acceptance, not for the turn.
//   - CancelTurn aborts a session's running turn and discards its queued
//     messages; it does not wait for the turn to end.
//   - Release disposes a live session's agent, its children first, and
//     keeps the session stored; it blocks until the agent is disposed.
//   - Agent returns the handle of any agent live here now, without
//     blocking; AgentElsewhere, blocking on the store, that of an agent
//     another process on a shared Postgres store runs, which only sends.
//   - SendFrom is Send with the message's source; it blocks until
//     acceptance.
//   - Subscribe calls a function for every Notice of the live sessions
//     (live, running, released, an event appended, a message accepted or
//     gone, a child's epoch started or ended) on the goroutine that made
//     the change, so it must not block.
//   - Delegate runs one one-shot child through a named provider (an
//     Options.ACPAgents one, say); it blocks until the child is disposed.
//
// Reading the store never wakes an agent: History reads one session's log
// as events (ReadablePrefix recovers what a damaged one still holds, and
// Event.Payload reads an event's data as a typed event.Payload), Sessions
// lists every session with its title, whether it runs and how its last
// turn ended (LiveSessions only the live ones, reading no store), Search
// finds the stored events holding a phrase (the logs answer when the index
// fails), and Children and RenderChildren give a parent's
// catalog. On a JSONL folder they read through the store's derived SQLite
// index, which the runtime opens on first use (Options.NoIndex reads the
// logs instead). Options.Compression picks the encoding of a JSONL
// store's logs, Options.DurableAdmission makes acceptance wait for the
// fsynced inbox file, and Options.NoSync skips every fsync. Without a
// Runtime, Check names the damage of a store without writing to it,
// Import copies a JSONL folder into a Postgres store and Export copies it
// back; each blocks until done.
//
// What blocks: Spawn, Send, SendFrom, Prompt and PromptSession return at
// inbox acceptance, before the turn runs; the handle's WhenIdle and WaitChild wait for turns;
// Drain, Shutdown and Close wait for the disposals they start; Children
// reads the store. A turn runs on its own goroutine, so an agent's RunTurn
// may block (on a model, on ctx) without holding up other agents.
//
// The web page and its RPC surface are package host's handler over this
// runtime: host.New(rt, host.Options{}) is an http.Handler (its protocol is
// docs/wire-protocol.md); close it, then the runtime.
//
// Shutdown(ctx) stops admission at once, lets running turns finish
// within ctx, then disposes every agent child-first and flushes the store;
// Close does the same at once, cancelling running turns. Once either
// began, every layer answers every call with an error matching
// fault.Closed.
package dsh

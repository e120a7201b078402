// Package dsh is where a program that embeds dsh-actors starts: Open
// returns a Runtime with everything a continuable subagent needs already
// wired — the session store (a JSONL folder, a Postgres database that
// several processes may share, or memory), the actor runtime with its
// agent factory (the keyless scripted agent unless another is given),
// the session query and catalog, and the one subagent service of that
// runtime with the "spawn" and "fork" providers registered.
//
// An agent is an agent.Agent built by Options.NewAgent; TextAgent makes one
// from a function from prompt text to answer text. A Runtime's methods cover
// the common flow: StartAgent publishes a top-level agent, Prompt gives it a
// user message, Spawn starts a continuable child of it, Send is a
// follow-up to that child, WaitChild blocks until the child's epoch ends
// (no polling), Children lists the durable catalog, Drain stops one
// parent's children child-first (a scoped drain) and ResumeAgent publishes a
// stored top-level agent again after a restart, so that its children
// cold-resume on their next Send. Subagents and Actors give the full
// service and runtime for everything else.
//
// Shutdown(ctx) stops admission at once, lets running turns finish
// within ctx, then disposes every agent child-first and flushes the store;
// Close does the same at once, cancelling running turns. Once either
// began, every layer answers every call with an error matching
// fault.Closed.
package dsh

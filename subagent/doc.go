// Package subagent is the public subagent seam: an agent delegates work to child agents through named
// providers, either as a one-shot run or as a durable continuable child it
// can talk to again later, list, and have torn down child-first.
//
// # Service
//
// New(runtime, query) returns the Service. RegisterProvider (scoped: it
// returns its remove func; a duplicate name is DUPLICATE_PROVIDER),
// GetProvider and List (insertion order) manage providers and emit
// subagent/provider-added and subagent/provider-removed.
//
// Start runs a one-shot child: it checks the provider, then the
// capabilities the request needs in the order outputSchema, depthLimit,
// toolFilter, persona (UNSUPPORTED_CAPABILITY), maxDepth and the schema,
// before the provider is called; the returned Run (Result,
// Dispose) is the caller's to dispose. Its result resolves on a child-level
// failure (a non-completed stop reason) and rejects only on an
// infrastructure fault.
//
// StartContinuable, Followup and DrainContinuableDescendants are served by
// the continuation manager (package actors/manager), bound when the
// Service has a runtime; the types they and the lifecycle events carry
// (manager.StartSpec, manager.Request, manager.Started, manager.RunInfo,
// manager.RunEndInfo) are defined there once and used here as they are; see that package for the order of checks, the
// residency routing, the authority rules and the disposal transaction.
// ListChildren is the durable catalog (package query): it needs no manager
// and never touches an Activation.
//
// # Providers
//
// Provider is open: anyone may implement it (Name, Capabilities,
// InheritsParentContext, Start) and register it beside the in-process
// providers NewSpawn and NewFork return; NewRun builds the Run its Start
// returns, ID and LocalAgent read it back, and DelegationDepth and
// ChildDepth give a provider the depth arithmetic the in-process ones use.
// A provider that also implements ContinuablePreparer can seed continuable
// children (its preparation only returns data). The spawn provider starts a
// fresh child, the fork provider seeds it with the parent's completed-turn
// prefix (header seedLength set). A provider running its child elsewhere
// (package subagent/acp runs an ACP agent process) returns a run with no
// local agent: its lifecycle events say local false, and the catalog never
// lists it. New installs the agent.Subagents capability of every agent,
// bound to the calling agent: Spawn starts a continuable child through the
// provider named "spawn", Send is a follow-up attributed
// {kind:"coordinator", senderSessionId}.
//
// # Lifecycle events
//
// Subscribe receives *StartEvent and *EndEvent (one pair per one-shot run
// and per continuable epoch, start before end, a run id shared by the
// pair), the provider-added and provider-removed events. Listeners are isolated: a
// panic is logged and peers still run; only a provider-added panic rolls
// the registration back and is returned by RegisterProvider. A
// continuable epoch's end reports its own stop reason and last assistant
// message (as manager.RunOutcome captures a run's), or stop reason error
// without a message when its teardown failed (DURABILITY_FAILED included).
//
// # Errors and depth
//
// Every error the service returns on purpose is a *fault.Error; match it
// with errors.Is against its code (fault.Draining, fault.Unauthorized, …),
// whichever layer returned it. A caller whose ctx ends is fault.Cancelled.
// Delegation depth: maxDepth must be a non-negative safe integer
// (fault.InvalidRequest); a child deeper than maxDepth is
// fault.DepthExceeded; a
// child's header delegationDepth is its parent's plus one and is the
// monotone floor on resume.
//
// # Not here (later work in the original)
//
// interrupt, reportFrom, listDescendants, settlement notices, caller-
// reserved child ids (DUPLICATE_CHILD) and steering do not exist.
package subagent

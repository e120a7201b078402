// Package manager is the continuation manager of continuable subagents:
// one protoactor actor that serializes every decision about them —
// admission, materialization, cold resume, routing by residency, the
// ownership graph, settlement, the child-first disposal transaction and the
// drains — and is never blocked by I/O. It receives typed messages only:
// a request per call (start, follow-up, wake, drain, wait), and the
// results of the I/O its steps start — provider preparation, session
// creation, cold-resume reads, durable admissions, flushes and waits run
// on other goroutines and send their result back as a message of its
// own; nothing inside the actor waits on another actor. The public
// subagent.Service wraps it.
//
// # Operations
//
// StartContinuable checks, materializes and prompts in a fixed order (see
// Manager.StartContinuable) and returns {ChildID, MessageID} at inbox acceptance. Followup routes by
// residency only: running queues behind the open turn, waiting wakes the
// same agent, absent cold-resumes a new epoch from the log through the
// store's repairing Load. Authority is the exact live direct parent
// (parent.Registry.IsLive on the caller's Handle, and the child's durable
// header naming its id), checked before rebuilding and again in the final
// admission step, which has no wait in it. The caller's context governs
// lookup, rebuild and admission only: every operation waits for the
// actor's verdict, and the actor reaches a cancelled context at its next
// checkpoint (a queued wait for a child's serialization is abandoned at
// once).
//
// The actor is a shell around a core (core.go): the state it owns and
// the decisions over it, in the spirit of a raft node's Step and Ready.
// The actor feeds each message to the core's step, which reads the world
// only through a small env (the registry's and the sessions' answers,
// none of which waits) and returns effects (effects.go): the I/O to
// start off the actor, the replies, the lifecycle edges, the calls on a
// child's actor. The actor performs them; each I/O sends its result back
// as a typed message. The core starts no goroutine and touches no store,
// so the interaction tests step it directly, one message per line.
//
// Each start, follow-up and wake is an op (op.go) that the core moves
// through the steps of its kind, one typed message at a time: its
// request; then, per I/O it asked for, the message carrying the result
// (prepared, resumeLoaded, opened, startEmitted, admitted, pendingRead,
// disposalSettled, …). start.go, followup.go and wake.go list those
// steps in order (followup.go holds a follow-up's every route, the cold
// resume among them, and the steps a start and a wake share with it); the routing and the other choices are plain
// functions of what the core knows (decideRoute and its siblings).
//
// DrainContinuableDescendants is the scoped drain;
// Close is the manager-wide drain, registered with Runtime.BeforeClose so
// it runs first when the runtime closes.
//
// # Residency and settlement
//
// Residency is derived, never stored: running (a turn open, or accepted
// message ids not yet dequeued or discarded), waiting (idle, owning
// undisposed children), settled (idle, owning none). The manager learns
// about changes from the agent event bus (inbox dequeue/discard and idle
// status of its children) and from ownership releases; a settled
// Activation's disposal is opened as soon as no critical section of that
// child holds its serialization.
//
// # The disposal transaction
//
// dispose.go reads top to bottom. The admission cut-off is set for the
// whole subtree in one step of the actor, and the top's actor is stopped,
// which cancels the subtree top-down at once. Every owned child's actor
// was spawned under its owner's (parent.Spec.Under), so the stop releases
// the forest child-first: an agent's release step (releaseStep) runs off
// the actor once its cancelled turn ended and its children's actors
// stopped, on the goroutine that saw the last of them (the turn's own,
// mostly), and its actor stops after it. The release step holds the
// required durability checkpoint (only true confirms; false or an error
// is DURABILITY_FAILED), the epoch captured while the child is still
// registered, the handle's own release; its outcome comes back as a
// message, and the actor removes the Activation and releases its
// ownership even on failure, and subagent/end is emitted. The first
// failure wins. A child whose parent is not a resident Activation here (a
// top-level agent, or a parent held by another process) is the root of
// its own local forest.
//
// # Supervision
//
// Every agent actor's props carry a stop-and-report strategy as the
// supervisor of the actors spawned under it (and, at the root, as its
// guardian): a failed actor is stopped, never restarted with empty state.
// An actor that begins stopping without the manager disposing it tells
// the manager at once (OnStop): its epoch fails and it is disposed,
// with its children, like any other. Drains never rely on protoactor's
// Stop or Poison to empty an inbox: they cancel and discard explicitly.
//
// # Lifecycle edges
//
// Options.Started and Options.Ended run on one lifecycle goroutine, in
// order, off the actor: a start always precedes its end, and a child's end
// precedes its parent's. They and agent-bus listeners must not block
// on the manager (start a goroutine to call it).
//
// # Deliberate choices
//
// A scoped drain's cut-off covers the root, the targets and their live
// lineage below the root, never agents above the root (the original keeps
// those too). A malformed descriptor on cold
// resume is returned unwrapped (matching fault.DescriptorCorrupt), as the
// original does. A turn ending with refusal maps to the refusal stop reason.
// An id that is live but has no Activation is NOT_RESUMABLE without
// touching its log.
package manager

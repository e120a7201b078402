// Package parent is the live-agent registry: it
// creates and resumes agents over live sessions, publishes them, answers
// "which exact agent is live under this id", walks live lineage, disposes
// agents (one, or all of them child-first), and carries the agent event bus.
//
// A Handle is one published agent. Every publication gets a new
// incarnation number, so a Handle kept from before a dispose-and-recreate of
// the same id is detectably stale: Get returns the new Handle, Exact with
// the old incarnation returns fault.StaleHandle, and the old Handle's follow-ups fail
// with fault.InboxClosed.
//
// Create and Resume reserve the id (a live or reserved id is fault.AgentExists),
// open the live session (Sessions.Create, or the repairing Sessions.Resume),
// build the agent with the factory, spawn its actor, and only then publish
// it and emit agent/created. A failure at any step rolls every earlier step
// back (actor stopped, session released from the live set, id unreserved)
// before it returns; a log file Create already wrote stays on disk, as the
// store has no delete.
//
// The Bus delivers Events to listeners: agent/created, agent/disposed, the
// inbox events agent/inbox/enqueue, agent/inbox/dequeue and
// agent/inbox/discard (one per message id) and agent/status
// (idle↔running). The events of one agent arrive in order, created first
// and disposed last; a panicking listener is logged and its peers still
// run. Listeners run on the goroutine that made the change; see Bus. An
// owner tracking many agents attaches one observer to each of them
// (Handle.Observe) instead: it is called with that agent's events alone,
// before the bus listeners, with no lookup by id.
package parent

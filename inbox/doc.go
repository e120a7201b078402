// Package inbox is an agent's only turn queue, implemented as the agent
// actor's protoactor mailbox (an actor.Mailbox given to the actor's props
// through actor.WithMailbox).
//
// An Inbox has two lanes. The system lane carries protoactor's system
// messages (Started, Stop, Watch, Terminated, Failure, SuspendMailbox,
// ResumeMailbox, …); it is always processed first, also while a turn runs.
// The turn lane carries the agent's user messages in accepted order.
//
// Post accepts a message under the inbox lock, gives it a MessageID when it
// has none (a uuid), and returns the id at once: acceptance, not the turn,
// is what the caller waits for. The mailbox then claims the head message
// only when no turn is running: the claim creates the turn's context,
// emits agent/inbox/dequeue and hands a *Claim to the actor as a user
// message. The lane stays closed until the actor calls EndTurn, so a
// message posted during a turn waits and becomes the next turn; nothing
// steers a running turn. Other protoactor user messages sent to the actor's
// PID (a PoisonPill, say) queue in the same FIFO and are delivered in order
// without opening a turn.
//
// Cancel aborts the claimed turn (its context is cancelled with the given
// agent.CancelCause) and, unless keepInbox, discards every queued message,
// emitting agent/inbox/discard for each id. Close does the same and refuses
// every later Post with errClosed; nothing accepted is dropped without a
// discard event.
//
// Events (enqueue, dequeue, discard and idle↔running status changes) go to
// the Observer one at a time, in the order the inbox made the changes, and
// never under the inbox lock: an observer may call back into the inbox. A
// Post may return before its enqueue event was delivered when another
// goroutine is delivering events at that moment.
package inbox

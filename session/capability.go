package session

import (
	"context"
	"encoding/json"
)

// The optional capabilities of a Store beyond Fenced. A store implements
// the ones it has; the runtime asserts each on the store it was given, as
// net/http asserts http.Flusher on a ResponseWriter.

// Admission is one message offered to a session's durable inbox.
type Admission struct {
	// MessageID names the message; admitting an id twice is idempotent.
	MessageID string
	// From is the sender: the session that must be the header's parent,
	// and FromEpoch the epoch of its lease that must be current and live.
	From      string
	FromEpoch Epoch
	// Body is the message as its user/message event's data.
	Body json.RawMessage
}

// DurableInbox is a store's durable inbox: it commits each accepted
// message before its caller hears of the acceptance and keeps what no
// turn claimed. A message is claimed by the append that writes the
// user/message event carrying its id (the turn's message, logged right
// after turn/start), so a crash leaves it claimed and logged or pending,
// never both and never neither. Every method blocks until the store
// answered (a commit, an fsync) or ctx is done.
type DurableInbox interface {
	// Admit commits m to id's inbox in one step that also checks that
	// m.From is the parent named in id's header, that m.FromEpoch is
	// From's current, live lease, and that no drain cut-off closed
	// admission below From (no window between check and write). fresh is
	// false when m.MessageID was admitted already (nothing is written).
	// From "" admits a user's message to a top-level session (no parent
	// in its header), with no lease to check.
	// Refusals: fault.Unauthorized, fault.Draining, ErrNotFound; an
	// Unauthorized whose FromEpoch is not From's live lease also matches
	// fault.Fenced (the sender's own lease is gone, not its authority
	// over id).
	Admit(ctx context.Context, id string, m Admission) (fresh bool, err error)
	// Pending returns id's admitted messages no append has claimed and
	// none was discarded, oldest first.
	Pending(ctx context.Context, id string) ([]Admission, error)
	// Discard marks messages of id as settled without a turn (a drain
	// discarded them), under id's lease epoch; they are not replayed.
	Discard(ctx context.Context, id string, epoch Epoch, messageIDs []string) error
	// CloseAdmission records a drain cut-off below parent at epoch: until
	// that lease ends, Admit from parent or from any session below it is
	// fault.Draining.
	CloseAdmission(ctx context.Context, parent string, epoch Epoch) error
}

// Admitting is a Store that may keep a durable inbox. DurableInbox
// returns it, or false when the store keeps none (a JSONL store opened
// without WithDurableAdmission). It does not block.
type Admitting interface {
	Store
	DurableInbox() (DurableInbox, bool)
}

// DrainCutoffs is a durable inbox that reports the drain cut-offs in
// force: what a cold resume checks once it holds a session's lease, so
// that a session below a drained ancestor never runs what was admitted
// before the drain. Both stores' inboxes are one.
type DrainCutoffs interface {
	// Drained reports whether a drain cut-off in force (its parent's
	// lease is still the one it was recorded under) closes admission to
	// id: one below id's parent or any of its ancestors. It blocks on the
	// store.
	Drained(ctx context.Context, id string) (bool, error)
}

// Waker is a durable inbox that can tell every process on the store which
// session should run its pending messages: the one that admitted them
// (woken at the admission's commit) and the one whose holder let its
// lease go, or lost it, with messages pending (woken by the release and
// by the store's sweep). The Postgres store's inbox is one.
type Waker interface {
	// Listen calls listening each time it is listening (once connected,
	// again after each reconnection) and wake with the id of each session
	// woken, on its own goroutine, in the order the wakes arrive, until
	// ctx is done; it reconnects after a failure with backoff. A wake may
	// be repeated or lost (a sweep repeats it); it names a session, it
	// proves nothing. It blocks until ctx is done and returns its error.
	Listen(ctx context.Context, listening func(), wake func(id string)) error
	// Orphaned reports whether id has pending messages, no holder with a
	// live lease and no drain cut-off in force (a drain settles a drained
	// session's pending messages; nothing wakes it to run them): what a
	// woken process that does not hold id checks before it tries a
	// takeover. It blocks on the store.
	Orphaned(ctx context.Context, id string) (bool, error)
	// DrainCutoffs is what a woken process holding a session checks,
	// since recording a cut-off (CloseAdmission) wakes every session
	// below it that a process holds.
	DrainCutoffs
	// AwaitReleasedBelow blocks until no session below parent holds a
	// live lease (each has been released, by whatever process held it,
	// or its holder's lease expired), or ctx is done.
	AwaitReleasedBelow(ctx context.Context, parent string) error
}

// LeaseWatcher is a Fenced store whose leases can be lost while held: a
// renewal finds that another holder took one over after it expired.
type LeaseWatcher interface {
	Fenced
	// WatchLeases has the store call lost, on the goroutine that found it
	// (the store's renewal), with the id and epoch of every lease it held
	// and found lost, until stop is called (stop returns once lost is no
	// longer registered; a call already under way may still finish) or
	// the store is closed. lost must not block.
	WatchLeases(lost func(id string, epoch Epoch)) (stop func())
}

// Sweeper is a store shared by several processes whose leases expire: a
// sweep takes over what an expired holder left and wakes what it left
// pending.
type Sweeper interface {
	// Sweep takes over every session whose holder's lease expired with
	// messages pending, releasing it again so that a woken process runs
	// them, and wakes sessions with pending messages and no live holder.
	// It returns the ids it swept and blocks on the store.
	Sweep(ctx context.Context) (swept []string, err error)
}

// InboxOf returns store's durable inbox, false when store is not
// Admitting or keeps none. It does not block.
func InboxOf(store Store) (DurableInbox, bool) {
	a, ok := store.(Admitting)
	if !ok {
		return nil, false
	}
	return a.DurableInbox()
}

// LogLister is a Store that lists its sessions and reads each listed log
// in the same pass, opening each file once: what List and one Inspect per
// listed session give (a derived index built from nothing reads so).
type LogLister interface {
	Store
	// ListLogs calls fn, in listing order, with each header List would
	// return and what Inspect of that session would (its log, or the
	// error reading it). A listing failure, or fn's first error, stops it
	// and is returned. It blocks on the store and on fn.
	ListLogs(ctx context.Context, fn func(h Header, log *Log, err error) error) error
}

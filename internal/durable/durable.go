// Package durable is the seam of the durable inbox: a store that commits
// each accepted follow-up before its caller hears of the acceptance, and
// replays what no turn claimed after a crash. The session stores (the
// JSONL store in its durable admission mode, the Postgres store) register
// their implementation here at init, so the seam adds nothing to the
// public surface; the manager finds it with Of.
//
// A message is claimed by the append that writes the user/message event
// carrying its id (the turn's message, logged right after turn/start):
// the claim is part of that write, so a crash leaves it either claimed
// and logged or pending, never both and never neither.
package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/dsh-actors/dsh-actors/fault"
)

// Admission is one message offered to a session's inbox.
type Admission struct {
	// MessageID names the message; admitting an id twice is idempotent.
	MessageID string
	// From is the sender: the session that must be the header's parent,
	// and FromEpoch the epoch of its lease that must be current and live.
	From      string
	FromEpoch int64
	// Body is the message as its user/message event's data.
	Body json.RawMessage
}

// Inbox is a store's durable inbox. Every method blocks until the store
// answered (a commit, an fsync) or ctx is done.
type Inbox interface {
	// Admit commits m to id's inbox in one step that also checks that
	// m.From is the parent named in id's header, that m.FromEpoch is
	// From's current, live lease, and that no drain cut-off closed
	// admission below From (no window between check and write). fresh is
	// false when m.MessageID was admitted already (nothing is written).
	// Refusals: fault.Unauthorized, fault.Draining, session.ErrNotFound.
	Admit(ctx context.Context, id string, m Admission) (fresh bool, err error)
	// Pending returns id's admitted messages no append has claimed and
	// none was discarded, oldest first.
	Pending(ctx context.Context, id string) ([]Admission, error)
	// Discard marks messages of id as settled without a turn (a drain
	// discarded them), under id's lease epoch; they are not replayed.
	Discard(ctx context.Context, id string, epoch int64, messageIDs []string) error
	// CloseAdmission records a drain cut-off below parent at epoch: until
	// that lease ends, Admit from parent or from any session below it is
	// fault.Draining.
	CloseAdmission(ctx context.Context, parent string, epoch int64) error
}

// Drains is a durable inbox that reports the drain cut-offs in force:
// what a cold resume checks once it holds a session's lease, so that a
// session below a drained ancestor never runs what was admitted before
// the drain. Both stores' inboxes are one.
type Drains interface {
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
	// Orphaned reports whether id has pending messages, no holder
	// with a live lease and no drain cut-off in force (a drain settles a
	// drained session's pending messages; nothing wakes it to run them):
	// what a woken process that does not hold id
	// checks before it tries a takeover. It blocks on the store.
	Orphaned(ctx context.Context, id string) (bool, error)
	// Drains: what a woken process holding a session checks, since
	// recording a cut-off (CloseAdmission) wakes every session below it
	// that a process holds.
	Drains
	// AwaitReleasedBelow blocks until no session below parent holds a
	// live lease (each has been released, by whatever process held it,
	// or its holder's lease expired), or ctx is done.
	AwaitReleasedBelow(ctx context.Context, parent string) error
}

var (
	mu      sync.RWMutex
	finders []func(store any) (Inbox, bool)
)

// Register adds a finder that recognizes a store with a durable inbox;
// the stores call it at init.
func Register(find func(store any) (Inbox, bool)) {
	mu.Lock()
	defer mu.Unlock()
	finders = append(finders, find)
}

// Of returns the durable inbox of store, false when it has none (or,
// for the JSONL store, when its durable admission mode is off).
func Of(store any) (Inbox, bool) {
	mu.RLock()
	defer mu.RUnlock()
	for _, find := range finders {
		if in, ok := find(store); ok {
			return in, true
		}
	}
	return nil, false
}

// MessageID is the id in a user/message event's data ("" when it has
// none or does not parse).
func MessageID(data json.RawMessage) string {
	var m struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(data, &m)
	return m.ID
}

// LiveEpoch returns the lease epoch a *session.Live writes under (0 when
// its store is not fenced); the session package sets it at init.
var LiveEpoch func(live any) int64

// LeaseHeld is the fault.LeaseHeld error of an Acquire of id refused
// because holder (a description) holds its lease; both stores return it.
func LeaseHeld(id, holder string) error {
	return fault.New(fault.LeaseHeld, fmt.Sprintf(`session "%s": lease is held by %s`, id, holder), nil)
}

// Fenced is the fault.Fenced error of an append to id under epoch, which
// is no longer the current lease; both stores return it.
func Fenced(id string, epoch int64) error {
	return fault.New(fault.Fenced, fmt.Sprintf(`session "%s": epoch %d is no longer the current lease; nothing was written`, id, epoch), nil)
}

var (
	watchMu  sync.RWMutex
	watchers []func(store any, lost func(id string, epoch int64)) (stop func(), ok bool)
)

// RegisterLeaseWatch adds a watcher for stores whose leases can be lost
// while held (a renewal finds another holder took one over after it
// expired): watch reports whether it recognizes store and, when it does,
// has store call lost for every such lease from then on, until stop is
// called or the store is closed. The stores call it at init.
func RegisterLeaseWatch(watch func(store any, lost func(id string, epoch int64)) (stop func(), ok bool)) {
	watchMu.Lock()
	defer watchMu.Unlock()
	watchers = append(watchers, watch)
}

// WatchLeases has store call lost, on the goroutine that found it (the
// store's renewal), with the id and epoch of every lease it held and
// found lost, until stop is called (it returns once lost is no longer
// registered; a call already under way may still finish) or the store is
// closed; lost must not block. It reports false when store's leases
// cannot be lost while held (the JSONL store's flock leases), and then
// lost is never called and stop is nil.
func WatchLeases(store any, lost func(id string, epoch int64)) (stop func(), ok bool) {
	watchMu.RLock()
	defer watchMu.RUnlock()
	for _, watch := range watchers {
		if stop, ok := watch(store, lost); ok {
			return stop, true
		}
	}
	return nil, false
}

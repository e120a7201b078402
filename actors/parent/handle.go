package parent

import (
	"context"
	"sync/atomic"

	"github.com/dsh-actors/dsh-actors/actors/activation"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/actorkit"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// Handle is one published agent: its activation, its live session and its
// registry entry. A Handle stays valid after disposal (its follow-ups then
// fail with fault.InboxClosed); compare it with Registry.Get or
// IsLive to know whether it is still the live agent for its id.
type Handle struct {
	reg         *Registry
	id          string
	incarnation uint64
	header      session.Header
	spec        Spec
	act         *activation.Activation
	end         atomic.Pointer[handleEnd]   // made by the first Dispose or Disposed
	own         atomic.Pointer[func(Event)] // the handle's own observer (Observe)
	ownScanned  atomic.Int64                // see HoldsOwnDescriptor
}

// handleEnd is a Handle's disposal state, made on first use so that an
// agent nobody disposes yet carries no channel for it.
type handleEnd struct {
	sem  chan struct{} // a one-slot semaphore serializing Dispose
	done chan struct{} // closed once Dispose completed
	err  error         // Dispose's result, set before done closes
}

// ending returns h's disposal state, making it on the first call.
func (h *Handle) ending() *handleEnd {
	if e := h.end.Load(); e != nil {
		return e
	}
	e := &handleEnd{sem: make(chan struct{}, 1), done: make(chan struct{})}
	if h.end.CompareAndSwap(nil, e) {
		return e
	}
	return h.end.Load()
}

// ID is the agent's (and session's) id.
func (h *Handle) ID() string { return h.id }

// Incarnation is this publication's number, unique within the registry and
// increasing with every Create and Resume.
func (h *Handle) Incarnation() uint64 { return h.incarnation }

// Header is the session header the agent runs under.
func (h *Handle) Header() session.Header { return h.header }

// Spec is what the agent was created or resumed with (its route: Provider
// and Model; and its options). Spec().Agent is nil unless one was given.
func (h *Handle) Spec() Spec { return h.spec }

// Session is the agent's live session.
func (h *Handle) Session() *session.Live { return h.act.Session() }

// Activation is the agent actor.
func (h *Handle) Activation() *activation.Activation { return h.act }

// Post accepts msg (its ID may be preset, see inbox.NewMessageID) as a later
// turn and returns its MessageID at inbox acceptance, without waiting for
// the turn. It fails with fault.InboxClosed once Dispose began, and with
// the registry's refusal once Registry.Refuse was called.
func (h *Handle) Post(ctx context.Context, msg event.UserMessage) (string, error) {
	if err := h.reg.refused(); err != nil {
		return "", err
	}
	id, err := h.act.Followup(ctx, msg)
	return id, actorkit.Cancellation(ctx, err)
}

// Followup is Post of a new message with content and source.
func (h *Handle) Followup(ctx context.Context, content []event.Block, source event.Source) (string, error) {
	return h.Post(ctx, event.UserMessage{Content: content, Source: source, Role: "user"})
}

// Disposed is closed once Dispose has completed.
func (h *Handle) Disposed() <-chan struct{} { return h.ending().done }

// Dispose tears the agent down, in order: the activation's Dispose (inbox
// closed, queued messages discarded, the running turn cancelled with cause
// disposed and awaited, actor stopped), then Sessions.Release (flush, then
// drop from the live set), then removal from the registry and
// agent/disposed. It blocks until done or ctx is done (then it returns
// ctx's error and a later call continues). Once complete, every call
// returns the same result at once: nil, or the release error (a failed
// flush) — the agent is unregistered either way. One exception: called
// from inside an event listener while another Dispose of the agent runs,
// it returns nil at once without waiting, since that Dispose may be the
// one delivering the event; the disposal completes once the listener has
// returned.
func (h *Handle) Dispose(ctx context.Context) error {
	end := h.ending()
	if entered, err := end.enter(ctx); !entered {
		return err
	}
	defer func() { <-end.sem }()
	select {
	case <-end.done:
		return end.err
	default:
	}
	if err := h.act.Dispose(ctx); err != nil {
		return err
	}
	err := h.reg.sessions.Release(ctx, h.act.Session())
	if ctx.Err() != nil {
		return ctx.Err()
	}
	end.err = err
	h.reg.unpublish(h)
	close(end.done) // complete before Emit, which may wait for listeners
	h.act.Emit(inbox.Event{Type: EventDisposed})
	return err
}

// Observe makes fn this agent's own observer: it receives the agent's
// events published after the call, on the publishing goroutine, before the
// bus listeners and with the bus's ordering (one at a time, in order). A
// panic in fn is logged like a bus listener's. A later call replaces fn;
// nil removes it. It does not block.
//
// Unlike a bus listener, it costs nothing for other agents' events and
// needs no lookup by id, so an owner tracking many agents attaches one
// per agent.
func (h *Handle) Observe(fn func(Event)) {
	if fn == nil {
		h.own.Store(nil)
		return
	}
	own := new(func(Event)) // only here: storing &fn would move fn to the heap on every call
	*own = fn
	h.own.Store(own)
}

// enter takes the Dispose semaphore, or reports what Dispose must
// return instead: the completed result; nil at once for a call from inside
// an event listener while another Dispose runs (that Dispose may be the
// one delivering the event, on this very goroutine, so waiting for it
// would never end); or ctx's error if ctx ended while another Dispose ran.
// The uncontended case takes it without a select over three channels.
func (e *handleEnd) enter(ctx context.Context) (entered bool, err error) {
	select {
	case e.sem <- struct{}{}:
		return true, nil
	case <-e.done:
		return false, e.err
	default:
	}
	if inbox.InsideDelivery() {
		return false, nil
	}
	select {
	case e.sem <- struct{}{}:
		return true, nil
	case <-e.done:
		return false, e.err
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// observe forwards the activation's events (its inbox's, and created and
// disposed, which the registry emits through it) to the handle's own
// observer, then to the bus.
func (h *Handle) observe(e inbox.Event) {
	ev := Event{Event: e, AgentID: h.id, Incarnation: h.incarnation}
	if fn := h.own.Load(); fn != nil {
		h.reg.bus.call(*fn, ev)
	}
	h.reg.bus.publish(ev)
}

// descriptorFound is ownScanned once a descriptor was found.
const descriptorFound = -1

// HoldsOwnDescriptor reports whether the session's own events (those past
// its seed) hold a subagent/descriptor: the session belongs to a
// continuation owner. Each event is looked at once over the handle's
// life (ownScanned remembers how far the log was read), so asking before
// every prompt costs only the events appended since. It does not block.
func (h *Handle) HoldsOwnDescriptor() bool {
	from := h.ownScanned.Load()
	if from == descriptorFound {
		return true
	}
	events := h.Session().Events()
	from = max(from, int64(seedLength(h.header)))
	for _, e := range events[min(int(from), len(events)):] {
		if e.Type == vocab.TypeSubagentDescriptor {
			h.ownScanned.Store(descriptorFound)
			return true
		}
	}
	h.advanceOwnScanned(max(from, int64(len(events))))
	return false
}

// advanceOwnScanned raises ownScanned to n unless a scan found a
// descriptor or read further meanwhile.
func (h *Handle) advanceOwnScanned(n int64) {
	for {
		cur := h.ownScanned.Load()
		if cur == descriptorFound || cur >= n || h.ownScanned.CompareAndSwap(cur, n) {
			return
		}
	}
}

// seedLength is h's seed length, 0 when it has none or a negative one.
func seedLength(h session.Header) int {
	if h.SeedLength == nil {
		return 0
	}
	return max(*h.SeedLength, 0)
}

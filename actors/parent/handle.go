package parent

import (
	"context"
	"sync/atomic"

	"github.com/dsh-actors/dsh-actors/actors/activation"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/actorkit"
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
	end         atomic.Pointer[handleEnd]   // made by the first Dispose or Disposed, or by the release (see settle)
	own         atomic.Pointer[func(Event)] // the handle's own observer (Observe)
	// releaser is told about the release step (Releasing), or is
	// &releaseTaken once the stop has taken the step.
	releaser atomic.Pointer[releaser]
	// released is set, under reg.mu, by the release step: a handle
	// released before its publication is never published.
	released bool
}

// handleEnd is a Handle's disposal state, made on first use so that an
// agent nobody disposes yet carries no channel for it.
type handleEnd struct {
	sem  chan struct{} // a one-slot semaphore serializing Dispose
	done chan struct{} // closed once Dispose completed
	err  error         // Dispose's result, set before done closes
}

// settledClean is the disposal state of every Handle whose release
// succeeded before anybody asked for its own: Dispose completed, no error.
// It has no semaphore: a Dispose finds it done and returns at once.
var settledClean = func() *handleEnd {
	e := &handleEnd{done: make(chan struct{})}
	close(e.done)
	return e
}()

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

// Dispose tears the agent down by stopping its actor and waiting for the
// stop (activation.Activation.Stop): the inbox is closed (queued messages
// discarded, the running turn cancelled with cause disposed), the agents
// spawned under it (Spec.Under) are disposed the same way, the cancelled
// turn is awaited, and then its release step runs: Sessions.Release
// (flush, then drop from the live set), removal from the registry and
// agent/disposed, in that order. It blocks until done or ctx is done (then
// it returns ctx's error; the stop goes on and a later call waits for
// it). Once complete, every call returns the same result at once: nil, or
// the release error (a failed flush) — the agent is unregistered either
// way. One exception: called from inside an event listener while another
// Dispose of the agent runs, it returns nil at once without waiting, since
// that Dispose may be the one delivering the event; the disposal completes
// once the listener has returned.
func (h *Handle) Dispose(ctx context.Context) error {
	end := h.ending()
	if entered, err := end.enter(ctx); !entered {
		return err
	}
	defer func() { <-end.sem }()
	if err := h.stop(ctx); err != nil {
		return err
	}
	return end.err
}

// stop stops h's actor and waits for its release step to have set
// Dispose's result and, unless the caller is inside an event delivery, for
// the actor to have stopped: the release step's agent/disposed waits for
// the delivery the caller may be part of, so such a caller waits only
// until that event is queued (it is delivered after the caller returns).
func (h *Handle) stop(ctx context.Context) error {
	if !inbox.InsideDelivery() {
		return h.act.Dispose(ctx)
	}
	h.act.Stop(agent.CancelCause{Kind: agent.CauseDisposed})
	select {
	case <-h.ending().done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// releaser is told about the release step of a Handle's stop (see
// Dispose and Releasing). Both methods run off the actor, on the
// goroutine that runs the step, one after the other, and must not block
// on the agent or its parent. It is unexported to keep the surface
// small; any type with these two methods is one.
type releaser interface {
	// BeforeRelease runs once the agent is idle and every agent spawned
	// under it was released, before the Handle's own release.
	BeforeRelease()
	// Released runs right after the Handle's own release (the session
	// released, the Handle unregistered, agent/disposed queued), with
	// that release's error (Dispose's).
	Released(err error)
}

// Releasing makes r the releaser of h's stop: r.BeforeRelease runs once
// the agent is idle and every agent spawned under it was released, then
// h's own release (the session released, h unregistered, agent/disposed
// queued), then r.Released with that release's error (Dispose's). It
// reports false, changing nothing, once the stop has taken the release
// step (or another releaser was set). It does not block.
func (h *Handle) Releasing(r releaser) bool {
	return h.releaser.CompareAndSwap(nil, &r)
}

// releaseTaken marks a Handle's releaser as taken by its stop.
var releaseTaken releaser

// releaseStep is the release step of h's stop: h's own release over
// live, between the two calls of its releaser, if any. It runs once: a
// later call does nothing.
func (h *Handle) releaseStep(live *session.Live) {
	r := h.releaser.Swap(&releaseTaken)
	if r == &releaseTaken {
		return
	}
	if r != nil {
		(*r).BeforeRelease()
	}
	h.release(live)
	if r != nil {
		(*r).Released(h.ending().err)
	}
}

// release is h's own release step over its live session: the session is
// released, then h leaves the registry and, when it was published,
// agent/disposed is emitted; Dispose's result is set once that event is
// queued (so nobody that Dispose released can see h's events end without
// it). It does not wait for a delivery going on elsewhere (a listener
// blocked there must not hold up the stop of h's parent).
func (h *Handle) release(live *session.Live) {
	err := h.reg.sessions.Release(context.Background(), live)
	settle := func() { h.settle(err) }
	if !h.reg.unpublish(h) { // never published: a rollback
		if err != nil {
			h.reg.logger.Error("actors: rollback: session release failed", "session", h.id, "err", err)
		}
		settle()
		return
	}
	h.act.EmitQueued(inbox.Event{Type: EventDisposed}, settle)
}

// settle sets Dispose's result to err and marks Dispose complete: in the
// disposal state made for h, or, when nobody made one and err is nil, by
// making h's state the shared settledClean (a drain's agents, released
// by their stop alone, then allocate none).
func (h *Handle) settle(err error) {
	if err == nil && h.end.CompareAndSwap(nil, settledClean) {
		return
	}
	end := h.ending()
	end.err = err
	close(end.done)
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

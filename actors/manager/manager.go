package manager

import (
	"cmp"
	"context"
	"log/slog"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/actorkit"
	"github.com/dsh-actors/dsh-actors/internal/dispatch"
	"github.com/dsh-actors/dsh-actors/session"
)

// AgentOptions choose a child's model route; empty fields inherit the
// parent's.
type AgentOptions struct {
	Provider string
	Model    string
}

// Request is what a continuable child is started with.
type Request struct {
	// Prompt is the child's first message (source {kind:"user"}).
	Prompt []event.Block
	// Parent is the calling agent; it must be the registry's exact live
	// entry for its id.
	Parent *parent.Handle
	// AgentOptions override the parent's model route (optional).
	AgentOptions *AgentOptions
	// MaxDepth is an absolute cap on the child's delegation depth (optional).
	MaxDepth *int
	// ToolFilter and Persona are the child's composition (optional); they
	// are recorded in the descriptor and reapplied on cold resume.
	ToolFilter *event.ToolFilter
	Persona    string
}

// StartSpec names the provider that prepares the child and the child's
// durable label.
type StartSpec struct {
	Provider string
	Label    string
	Request  Request
}

// Started is the result of StartContinuable: both ids, at inbox acceptance.
type Started struct {
	ChildID   string
	MessageID string
}

// prepareFunc is Options.Prepare.
type prepareFunc = func(ctx context.Context, provider, childID string, p *parent.Handle) ([]session.Event, error)

// checkpointFunc is the final durability checkpoint of a disposal: true
// only when everything the child appended is durable.
type checkpointFunc func(ctx context.Context, live *session.Live) (bool, error)

// Options configure New.
type Options struct {
	// Runtime is the actor runtime children run on (required).
	Runtime *actors.Runtime
	// Prepare runs the named provider's continuable preparation for the
	// child the manager reserved childID for, below the exact live parent p, and returns the
	// seed (inherited events, Seq == index; nil for a fresh child). It
	// fails with NO_PROVIDER or UNSUPPORTED_CAPABILITY before any child
	// resource exists. It runs off the manager's actor and may block
	// (required for StartContinuable).
	Prepare func(ctx context.Context, provider, childID string, p *parent.Handle) ([]session.Event, error)
	// Started and Ended receive subagent/start and subagent/end of every
	// epoch (optional; see their order under "Lifecycle edges" in the
	// package doc). Started is called once the epoch is resident, before
	// its prompt is submitted; an error from it is a publication failure
	// and rolls the unpublished Activation back with no end edge. Ended is
	// called after the epoch's disposal settled and ownership was
	// released. Both must not block on the manager.
	Started func(RunInfo) error
	Ended   func(RunEndInfo)
	// Logger receives teardown warnings; nil means the runtime's logger.
	Logger *slog.Logger

	// wakeLimit bounds the wakes handled at once (0: defaultWakeLimit).
	wakeLimit int

	// checkpoint replaces Sessions.Flush as the final durability checkpoint
	// (the fault-injection tests set it; nil means Sessions.Flush).
	checkpoint checkpointFunc

	// middleware wraps the actor's Receive (tests inspect its state).
	middleware []actor.ReceiverMiddleware
}

// dispatchThroughput is how many decisions the actor takes per mailbox run
// before it yields its goroutine.
const dispatchThroughput = 256

// Manager is the continuation manager: one protoactor actor that makes
// every decision about continuable children (admission, materialization,
// routing, ownership, settlement, disposal, drains). Slow work (provider
// preparation, session creation, cold-resume reads, flushes, waits) runs on
// other goroutines and posts its result back, so the actor never blocks.
// Its methods are safe for concurrent use and block only the caller.
type Manager struct {
	*core      // the decisions, stepped by the actor only
	rt         *actors.Runtime
	registry   *parent.Registry
	sessions   *session.Sessions
	prepare    prepareFunc
	onStarted  func(RunInfo) error
	onEnded    func(RunEndInfo)
	checkpoint checkpointFunc
	logger     *slog.Logger
	system     *actor.ActorSystem
	pid        *actor.PID
	dispatcher *dispatch.Pool // one long-lived goroutine runs the actor
	self       actor.Context  // the actor's context, valid inside Receive only
	haltMu     sync.RWMutex
	halted     bool
	stopped    chan struct{}
	closing    chan struct{} // a one-slot semaphore serializing Close
	drained    bool          // Close's drain finished (guarded by closing)
	drainErr   error         // its outcome
	finished   bool          // Close completed (guarded by closing)
	ops        gate
	inbox      session.DurableInbox // the store's durable inbox, nil when it has none
	wakes      wakes                // the store's wake listener
	edges      edgeQueue            // lifecycle emission, in order, off the actor (edges.go)
	unsubscribe,
	removeHook func()
}

// New spawns the manager's actor, subscribes it to the agent event bus,
// registers Close as a Runtime.BeforeClose hook (a teardown failure there is
// logged, not returned, so the runtime still shuts down) and, when the
// store's durable inbox wakes (Postgres), starts listening for the wakes
// of children other processes admitted messages to (see wake.go). It
// does not block.
func New(opts Options) (*Manager, error) {
	logger := opts.Logger
	if logger == nil {
		logger = opts.Runtime.Logger()
	}
	m := &Manager{
		rt:         opts.Runtime,
		registry:   opts.Runtime.Registry(),
		sessions:   opts.Runtime.Sessions(),
		prepare:    opts.Prepare,
		onStarted:  opts.Started,
		onEnded:    opts.Ended,
		checkpoint: opts.checkpoint,
		logger:     logger,
		system:     opts.Runtime.ActorHost().System,
		stopped:    make(chan struct{}),
		closing:    make(chan struct{}, 1),
	}
	if m.checkpoint == nil {
		m.checkpoint = m.sessions.Flush
	}
	if in, ok := session.InboxOf(m.sessions.Store()); ok {
		m.inbox = in
	}
	_, wakes := m.inbox.(session.Waker)
	m.core = &core{st: newState(), env: runtimeEnv{opts.Runtime}, durable: m.inbox != nil, wakes: wakes, logger: logger}
	m.dispatcher = dispatch.NewPool(1, dispatchThroughput)
	props := actor.PropsFromProducer(m.produce,
		actor.WithDispatcher(m.dispatcher), actor.WithReceiverMiddleware(opts.middleware...))
	pid, err := m.system.Root.SpawnNamed(props, "subagent-manager/"+m.system.ProcessRegistry.NextId())
	if err != nil {
		m.dispatcher.Close()
		return nil, err
	}
	m.pid = pid
	m.unsubscribe = m.registry.Subscribe(m.onAgentEvent)
	m.removeHook = m.rt.BeforeClose(m.closeForRuntime)
	m.startWakes(cmp.Or(opts.wakeLimit, defaultWakeLimit))
	return m, nil
}

// Close is the manager's unload: it stops listening for wakes (the wakes
// still queued are dropped; it waits for those in flight), then the manager-wide drain (every later
// admission fails with DRAINING; in-flight materializations are awaited
// and roll back; every Activation forest is disposed child-first), then it
// waits for the calls still in flight to return, unsubscribes and stops the
// actor. It blocks until then or ctx is done (then it returns CANCELLED,
// wrapping ctx's error, at whichever of those waits it was); it returns the drain's
// aggregate ACTIVATION_TEARDOWN_FAILED, if any, after stopping anyway.
// Runtime.Close calls it first. A Close that ctx cut short is continued
// by the next call (which first waits for a concurrent one); after a
// completed Close a later call returns nil at once.
func (m *Manager) Close(ctx context.Context) error {
	return actorkit.Cancellation(ctx, m.close(ctx))
}

// closeDone lets the next Close go.
func (m *Manager) closeDone() { <-m.closing }

// close is Close, with ctx's end returned as ctx's error.
func (m *Manager) close(ctx context.Context) error {
	select {
	case m.closing <- struct{}{}:
		defer m.closeDone()
	case <-ctx.Done():
		return ctx.Err()
	}
	if m.finished {
		return nil
	}
	if err := m.stopWakes(ctx); err != nil {
		return err
	}
	if !m.drained {
		err := m.drainAll(ctx)
		if ctx.Err() != nil {
			return ctx.Err() // the drain goes on; the next Close waits for it
		}
		m.drained, m.drainErr = true, err
	}
	if err := m.ops.closeAndWait(ctx); err != nil {
		return err
	}
	m.unsubscribe()
	m.halt()
	select {
	case <-m.stopped:
	case <-ctx.Done():
		return ctx.Err()
	}
	m.dispatcher.Close()
	m.removeHook()
	m.finished = true
	return m.drainErr
}

// ErrNoParent rejects a request that names no parent agent. It is a
// fault.Unauthorized, as a nil parent handle is everywhere.
var ErrNoParent = fault.New(fault.Unauthorized, "subagent: the request names no parent agent", nil)

// closeForRuntime is the BeforeClose hook: Close, with a teardown failure
// logged instead of returned (every Activation is released anyway, so the
// runtime's own shutdown goes on); only the end of ctx stops Runtime.Close.
func (m *Manager) closeForRuntime(ctx context.Context) error {
	err := m.Close(ctx)
	if err != nil && ctx.Err() == nil {
		m.logger.Warn("subagent: continuable subagent drain at runtime close: " + err.Error())
		return nil
	}
	return err
}

// gate counts the calls in flight so Close can wait for them, and refuses
// new ones once closed.
type gate struct {
	mu     sync.Mutex
	closed bool
	n      int
	idle   chan struct{}
}

// enter admits one call; false once the gate is closed.
func (g *gate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.n++
	return true
}

func (g *gate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n--
	if g.n == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
}

// closeAndWait refuses new calls and waits until none is in flight.
func (g *gate) closeAndWait(ctx context.Context) error {
	g.mu.Lock()
	g.closed = true
	if g.n == 0 {
		g.mu.Unlock()
		return nil
	}
	if g.idle == nil {
		g.idle = make(chan struct{})
	}
	idle := g.idle
	g.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

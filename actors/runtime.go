package actors

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/actorkit"
	"github.com/dsh-actors/dsh-actors/internal/dispatch"
	"github.com/dsh-actors/dsh-actors/session"
)

// errClosed is every call's answer once shutdown began (fault.Closed).
var errClosed = fault.New(fault.Closed, "actors: runtime is closed", nil)

// Options configure New. The zero value is a memory-only runtime running
// scripted agents, logging nothing.
type Options struct {
	// Sessions is the session registry to run agents over. When nil, New
	// makes one: over session.OpenJSONL(Root) when Root is set (the runtime
	// then owns and closes that store), memory-only otherwise.
	Sessions *session.Sessions
	// Root is the store folder used when Sessions is nil.
	Root string
	// StoreOptions configure the store opened at Root (after the
	// runtime's Logger, which it warns of repairs to).
	StoreOptions []session.Option
	// Logger receives the runtime's and protoactor's logs (protoactor's
	// Info demoted to Debug); nil discards everything.
	Logger *slog.Logger
	// NewAgent builds every agent started or resumed without an explicit
	// Agent; nil means agent.Scripted.
	NewAgent agent.Factory
	// Provider and Model are the model route of the agents NewAgent builds
	// when their spec names none (empty: the agent package defaults).
	Provider, Model string
	// Workers sizes the pool of goroutines that runs the agents'
	// mailboxes; 0 means runtime.GOMAXPROCS(0).
	Workers int

	dispatcher actor.Dispatcher // replaces the pool (benchmarks set it)
}

// Runtime owns the agents of one process. All methods are safe for
// concurrent use.
type Runtime struct {
	logger    *slog.Logger
	sessions  *session.Sessions
	ownsStore bool
	system    *actor.ActorSystem
	pool      *dispatch.Pool
	registry  *parent.Registry

	mu             sync.Mutex
	hooks          []*hook
	closing        bool
	subagentsBound bool
	closeMu        sync.Mutex // serializes Close
	finished       bool       // Close completed
}

// hook is one BeforeClose registration.
type hook struct {
	run  func(ctx context.Context) error
	done bool
}

// New opens the runtime: the session registry (opening the store at Root
// when asked), the actor system with protoactor's logging routed to
// Options.Logger, the dispatcher pool and the agent registry.
func New(opts Options) (*Runtime, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	rt := &Runtime{logger: logger, sessions: opts.Sessions}
	if rt.sessions == nil {
		if err := rt.openSessions(opts.Root, opts.StoreOptions); err != nil {
			return nil, err
		}
	}
	rt.system = actorkit.NewSystem(opts.Logger)
	dispatcher := opts.dispatcher
	if dispatcher == nil {
		rt.pool = dispatch.NewPool(orDefault(opts.Workers, runtime.GOMAXPROCS(0)), inbox.DefaultThroughput)
		dispatcher = rt.pool
	}
	rt.registry = parent.New(parent.Config{
		Sessions: rt.sessions, Actors: actorkit.Host{System: rt.system, Dispatcher: dispatcher},
		NewAgent: opts.NewAgent, Provider: opts.Provider, Model: opts.Model, Logger: logger,
	})
	return rt, nil
}

func orDefault(v, fallback int) int {
	if v > 0 {
		return v
	}
	return fallback
}

// openSessions makes the runtime's own session registry.
func (rt *Runtime) openSessions(root string, opts []session.Option) error {
	if root == "" {
		rt.sessions = session.NewSessions(nil)
		return nil
	}
	store, err := session.OpenJSONL(root, append([]session.Option{session.WithLogger(rt.logger)}, opts...)...)
	if err != nil {
		return err
	}
	rt.sessions, rt.ownsStore = session.NewSessions(store), true
	return nil
}

// Sessions is the session registry agents run over.
func (rt *Runtime) Sessions() *session.Sessions { return rt.sessions }

// Registry is the live-agent registry.
func (rt *Runtime) Registry() *parent.Registry { return rt.registry }

// ActorHost is where the runtime's agents are spawned: its actor system,
// with protoactor's default dispatcher and supervision.
func (rt *Runtime) ActorHost() actorkit.Host { return actorkit.Host{System: rt.system} }

// Logger is the runtime's logger (never nil).
func (rt *Runtime) Logger() *slog.Logger { return rt.logger }

// ErrSubagentsInstalled rejects a second subagent capability on one
// runtime: exactly one subagent service owns a runtime's children. It is
// a fault.DuplicateProvider.
var ErrSubagentsInstalled = fault.New(fault.DuplicateProvider, "actors: a subagent service is already bound to this runtime", nil)

// InstallSubagents installs the agent.Subagents capability factory: every
// Host.Subagents call of a turn gets fn(the calling agent's Handle). It
// returns uninstall (idempotent; Host.Subagents then returns nil), or
// ErrSubagentsInstalled while another factory is installed. It does not
// block.
func (rt *Runtime) InstallSubagents(fn func(self *parent.Handle) agent.Subagents) (uninstall func(), err error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.subagentsBound {
		return nil, ErrSubagentsInstalled
	}
	rt.subagentsBound = true
	rt.registry.SetSubagents(fn)
	var once sync.Once
	return func() {
		once.Do(func() {
			rt.mu.Lock()
			defer rt.mu.Unlock()
			rt.subagentsBound = false
			rt.registry.SetSubagents(nil)
		})
	}, nil
}

// BeforeClose registers hook to run at the start of Close, before any
// agent is disposed; hooks run one after another in registration order,
// each at most once to success. remove unregisters it (idempotent). A hook
// error stops Close, which returns it; a later Close retries that hook.
func (rt *Runtime) BeforeClose(run func(ctx context.Context) error) (remove func()) {
	h := &hook{run: run}
	rt.mu.Lock()
	rt.hooks = append(rt.hooks, h)
	rt.mu.Unlock()
	return func() {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		for i, x := range rt.hooks {
			if x == h {
				rt.hooks = append(rt.hooks[:i:i], rt.hooks[i+1:]...)
				return
			}
		}
	}
}

// checkOpen returns the closed error once shutdown began.
func (rt *Runtime) checkOpen() error { return rt.Err() }

// Err is nil while the runtime admits work and, once Shutdown or Close
// began, the closed error (matching fault.Closed) every layer answers
// with from then on. It does not block.
func (rt *Runtime) Err() error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closing {
		return errClosed
	}
	return nil
}

// stopAdmission begins shutdown: from now on the runtime, its registry
// and every agent's inbox refuse new work with the closed error.
func (rt *Runtime) stopAdmission() {
	rt.mu.Lock()
	rt.closing = true
	rt.mu.Unlock()
	rt.registry.Refuse(errClosed)
}

// Shutdown closes the runtime gracefully, as net/http's Server.Shutdown
// does: admission stops at once (every later call, follow-up and start
// fails with the closed error), then it waits until every live agent is
// idle (the turns running and the messages already accepted run to their
// end), then it is Close. It blocks until done or ctx is done; when ctx
// ends while turns still run it returns ctx's error and leaves them
// running: call Close to cancel them.
func (rt *Runtime) Shutdown(ctx context.Context) error {
	rt.stopAdmission()
	if err := rt.waitIdle(ctx); err != nil {
		return err
	}
	return rt.Close(ctx)
}

// waitIdle waits until a pass over the live agents finds every one idle.
func (rt *Runtime) waitIdle(ctx context.Context) error {
	for {
		busy := false
		for _, h := range rt.registry.List() {
			if h.Activation().Status() == inbox.Idle {
				continue
			}
			busy = true
			if err := h.Activation().WhenIdle(ctx); err != nil {
				return err
			}
		}
		if !busy {
			return ctx.Err()
		}
	}
}

// StartAgent creates a top-level (or any) agent over a new session, as
// parent.Registry.Create: it returns once the agent is published.
func (rt *Runtime) StartAgent(ctx context.Context, spec parent.CreateSpec) (*parent.Handle, error) {
	if err := rt.checkOpen(); err != nil {
		return nil, err
	}
	return rt.registry.Create(ctx, spec)
}

// ResumeAgent rebuilds an agent from its stored log, as
// parent.Registry.Resume.
func (rt *Runtime) ResumeAgent(ctx context.Context, id string, spec parent.Spec) (*parent.Handle, error) {
	if err := rt.checkOpen(); err != nil {
		return nil, err
	}
	return rt.registry.Resume(ctx, id, spec)
}

// ResumeAgentLoaded is ResumeAgent over a log the caller has just read
// with the sessions' Store().Load, as parent.Registry.ResumeLoaded: the
// cold resume that checks a log before rebuilding reads it once.
func (rt *Runtime) ResumeAgentLoaded(ctx context.Context, log *session.Log, spec parent.Spec) (*parent.Handle, error) {
	if err := rt.checkOpen(); err != nil {
		return nil, err
	}
	return rt.registry.ResumeLoaded(ctx, log, spec)
}

// Followup delivers a user message with content and source to the live
// agent id and returns its MessageID as soon as the agent's inbox accepted
// it; the message becomes its own later FIFO turn. It fails with fault.Closed
// after Close began, fault.AgentNotFound when id is not live, and
// fault.InboxClosed while the agent is being disposed.
func (rt *Runtime) Followup(ctx context.Context, id string, content []event.Block, source event.Source) (string, error) {
	if err := rt.checkOpen(); err != nil {
		return "", err
	}
	h, err := rt.registry.Lookup(id)
	if err != nil {
		return "", err
	}
	return h.Followup(ctx, content, source)
}

// Close shuts the runtime down at once: admission stops (as in
// Shutdown), then the BeforeClose hooks, then every agent
// disposed child-first (parent.Registry.Close), then every live session
// flushed, the owned store closed, and last the actor system shut down and
// the pool stopped. It blocks until done or ctx is done; then it returns
// ctx's error and a later Close continues where this one stopped. After a
// completed Close it returns nil at once. A failed dispose or flush (an
// agent's final flush, say) does not stop it: every agent is still
// disposed and the actor system shut down, and the failures are returned
// joined. Running turns are cancelled, accepted messages not yet run are
// discarded.
func (rt *Runtime) Close(ctx context.Context) error {
	rt.closeMu.Lock()
	defer rt.closeMu.Unlock()
	if rt.finished {
		return nil
	}
	rt.stopAdmission()
	if err := rt.runHooks(ctx); err != nil {
		return err
	}
	disposeErr := rt.registry.Close(ctx)
	if disposeErr != nil && ctx.Err() != nil {
		return disposeErr
	}
	flushErr := rt.flushSessions(ctx)
	if flushErr != nil && ctx.Err() != nil {
		return flushErr
	}
	rt.shutdown()
	rt.finished = true
	return errors.Join(disposeErr, flushErr)
}

// runHooks runs the BeforeClose hooks that have not succeeded yet.
func (rt *Runtime) runHooks(ctx context.Context) error {
	rt.mu.Lock()
	hooks := append([]*hook(nil), rt.hooks...)
	rt.mu.Unlock()
	for _, h := range hooks {
		if h.done {
			continue
		}
		if err := h.run(ctx); err != nil {
			return err
		}
		h.done = true
	}
	return nil
}

// flushSessions flushes every session still live (sessions not owned by an
// agent) and closes the store the runtime opened.
func (rt *Runtime) flushSessions(ctx context.Context) error {
	var errs []error
	for _, live := range rt.sessions.List() {
		if _, err := rt.sessions.Flush(ctx, live); err != nil {
			errs = append(errs, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if rt.ownsStore {
		errs = append(errs, rt.sessions.Store().Close())
		rt.ownsStore = false
	}
	return errors.Join(errs...)
}

// shutdown stops the actor system and the pool.
func (rt *Runtime) shutdown() {
	rt.system.Shutdown()
	if rt.pool != nil {
		rt.pool.Close()
	}
}

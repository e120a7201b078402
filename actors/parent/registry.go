package parent

import (
	"encoding/json"

	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-actors/dsh-actors/actors/activation"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/actorkit"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/google/uuid"
)

// Config wires a Registry.
type Config struct {
	// Sessions is the live session registry agents run over (required).
	Sessions *session.Sessions
	// Actors is where agents are spawned (its System is required; a nil
	// Supervisor stops a failing agent actor and logs it to Logger).
	Actors actorkit.Host
	// NewAgent builds each agent unless its Spec names one; nil means
	// agent.Scripted.
	NewAgent agent.Factory
	// Provider and Model are the route of a factory-built agent whose Spec
	// names none (empty: the agent package defaults).
	Provider, Model string
	// Logger receives failures; nil discards.
	Logger *slog.Logger
}

// Spec says how to build the agent of a Create or Resume.
type Spec struct {
	// Provider and Model attribute the agent's assistant messages and are
	// passed to the factory; empty means the agent package defaults.
	Provider string
	Model    string
	// MaxTokens, SubagentDepth, Persona and ToolFilter are passed to the
	// factory in agent.Options.
	MaxTokens     int
	SubagentDepth int
	Persona       string
	ToolFilter    *event.ToolFilter
	// OutputSchema is passed to the factory in agent.Options (a one-shot
	// child's structured answer).
	OutputSchema json.RawMessage
	// Agent, when non-nil, is used instead of calling the factory.
	Agent agent.Agent
	// Owner is the live agent whose subagent service started this one (a
	// one-shot or continuable child), nil for an agent nobody owns. It is
	// not durable: a child resumed by an ordinary route has none.
	Owner *Handle
	// Under, when set, is the live agent whose actor this one's is spawned
	// under (a protoactor child): Under's stop stops this agent first and
	// ends only once it was released. Nil spawns it at the root. A spawn
	// under an agent whose stop began fails with fault.ActivationClosing.
	Under *Handle
}

// options are the factory's agent.Options for header under this spec.
func (s Spec) options(header session.Header, resumed bool) agent.Options {
	return agent.Options{
		SessionID: header.ID, ParentSession: header.ParentSession,
		Provider: s.Provider, Model: s.Model, MaxTokens: s.MaxTokens,
		SubagentDepth: s.SubagentDepth, Persona: s.Persona, ToolFilter: s.ToolFilter, OutputSchema: s.OutputSchema,
		Resumed: resumed,
	}
}

// CreateSpec describes a new agent over a new session.
type CreateSpec struct {
	// Header of the new session. An empty ID gets a random uuid, a zero
	// CreatedAt the current time; Version must be left 0 (the only log
	// format): the store refuses another.
	Header session.Header
	// Seed events written with the header (optional).
	Seed []session.Event
	Spec
}

// Registry is the live-agent registry. All methods are safe for concurrent
// use.
type Registry struct {
	sessions    *session.Sessions
	actors      actorkit.Host
	newAgent    agent.Factory
	provider    string // the default route (Config.Provider, Config.Model)
	model       string
	logger      *slog.Logger
	bus         *bus
	subagents   atomic.Pointer[func(*Handle) agent.Subagents]
	incarnation atomic.Uint64

	mu       sync.RWMutex
	agents   map[string]*Handle
	reserved map[string]chan struct{} // closed when the create/resume settles
	closed   bool
	refusal  atomic.Pointer[error] // set once by Refuse
}

// New returns an empty registry.
func New(cfg Config) *Registry {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	newAgent := cfg.NewAgent
	if newAgent == nil {
		newAgent = agent.Scripted
	}
	actors := cfg.Actors
	if actors.Supervisor == nil {
		actors.Supervisor = actorkit.StopStrategy(logger)
	}
	return &Registry{
		sessions: cfg.Sessions,
		actors:   actors,
		newAgent: newAgent,
		provider: cfg.Provider,
		model:    cfg.Model,
		logger:   logger,
		bus:      newBus(logger),
		agents:   map[string]*Handle{},
		reserved: map[string]chan struct{}{},
	}
}

// Subscribe is Bus().Subscribe.
func (r *Registry) Subscribe(listener func(Event)) (cancel func()) {
	return r.bus.Subscribe(listener)
}

// SetSubagents installs the capability factory behind every agent's
// Host.Subagents: fn is called with the calling agent's exact Handle each
// time a turn asks for the capability. nil removes it.
func (r *Registry) SetSubagents(fn func(self *Handle) agent.Subagents) {
	if fn == nil {
		r.subagents.Store(nil)
		return
	}
	r.subagents.Store(&fn)
}

// Refuse stops admission at once: every later Create, Resume and
// follow-up (Handle.Post, Handle.Followup) fails with err. The first call
// wins; it does not block and disposes nothing.
func (r *Registry) Refuse(err error) { r.refusal.CompareAndSwap(nil, &err) }

// refused returns Refuse's error, or nil while admission is open.
func (r *Registry) refused() error {
	if err := r.refusal.Load(); err != nil {
		return *err
	}
	return nil
}

// Get returns the exact live Handle for id, or nil.
func (r *Registry) Get(id string) *Handle {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.agents[id]
}

// Lookup returns the exact live Handle for id, or fault.AgentNotFound.
func (r *Registry) Lookup(id string) (*Handle, error) {
	if h := r.Get(id); h != nil {
		return h, nil
	}
	return nil, notFound(id)
}

// exact returns the live Handle for id when its incarnation matches:
// fault.AgentNotFound when id is not live, fault.StaleHandle when it is live under another
// incarnation.
func (r *Registry) exact(id string, incarnation uint64) (*Handle, error) {
	h := r.Get(id)
	switch {
	case h == nil:
		return nil, notFound(id)
	case h.incarnation != incarnation:
		return nil, stale(id, incarnation, h.incarnation)
	}
	return h, nil
}

// IsLive reports whether h is the exact live Handle for its id.
func (r *Registry) IsLive(h *Handle) bool { return h != nil && r.Get(h.id) == h }

// List returns the live Handles in publication order.
func (r *Registry) List() []*Handle {
	r.mu.RLock()
	list := make([]*Handle, 0, len(r.agents))
	for _, h := range r.agents {
		list = append(list, h)
	}
	r.mu.RUnlock()
	slices.SortFunc(list, func(a, b *Handle) int { return cmp.Compare(a.incarnation, b.incarnation) })
	return list
}

// LiveLineage returns [h, h's live parent, its live parent, …], following
// each header's ParentSession through the live entries. It stops at the
// first id that is not live or that repeats. The first element is always h,
// even when h is stale.
func (r *Registry) LiveLineage(h *Handle) []*Handle {
	lineage := []*Handle{h}
	seen := map[string]bool{h.id: true}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for id := h.header.ParentSession; id != "" && !seen[id]; {
		next := r.agents[id]
		if next == nil {
			break
		}
		lineage = append(lineage, next)
		seen[id] = true
		id = next.header.ParentSession
	}
	return lineage
}

// Create opens a new session (Sessions.Create with the header and seed),
// starts its agent, publishes it and emits agent/created, in that order,
// and returns its Handle. It blocks while the store creates the log. A live
// or reserved id is fault.AgentExists; after Close it is fault.RegistryClosed; any other
// failure is fault.AgentStartFailed wrapping the cause, after a full rollback.
func (r *Registry) Create(ctx context.Context, spec CreateSpec) (*Handle, error) {
	h := spec.Header
	if h.ID == "" {
		h.ID = uuid.NewString()
	}
	if h.CreatedAt == 0 {
		h.CreatedAt = time.Now().UnixMilli()
	}
	return r.start(ctx, h.ID, "create", spec.Spec, false, func() (*session.Live, error) {
		return r.sessions.Create(ctx, h, spec.Seed)
	})
}

// Resume rebuilds the agent of a stored session: the repairing
// Sessions.Resume (a torn tail is truncated and an open turn closed as
// interrupted), then start, publish and agent/created as Create does. Turn
// numbers continue after the log's last turn.
func (r *Registry) Resume(ctx context.Context, id string, spec Spec) (*Handle, error) {
	return r.start(ctx, id, "resume", spec, true, func() (*session.Live, error) {
		return r.sessions.Resume(ctx, id)
	})
}

// ResumeLoaded is Resume over a log the caller has just read with the
// sessions' Store().Load (Sessions.ResumeLoaded): the log is not read
// again.
func (r *Registry) ResumeLoaded(ctx context.Context, log *session.Log, spec Spec) (*Handle, error) {
	return r.start(ctx, log.Header.ID, "resume", spec, true, func() (*session.Live, error) {
		return r.sessions.ResumeLoaded(log)
	})
}

// start reserves id, opens the session with open, spawns the agent and
// publishes it, rolling back on failure.
func (r *Registry) start(ctx context.Context, id, op string, spec Spec, resumed bool, open func() (*session.Live, error)) (*Handle, error) {
	h, err := r.startOnce(ctx, id, op, spec, resumed, open)
	return h, actorkit.Cancellation(ctx, err)
}

// startOnce is start without the re-coding of the caller's cancellation.
func (r *Registry) startOnce(ctx context.Context, id, op string, spec Spec, resumed bool, open func() (*session.Live, error)) (*Handle, error) {
	done, err := r.reserve(id)
	if err != nil {
		return nil, err
	}
	defer r.unreserve(id, done)
	if err := ctx.Err(); err != nil {
		return nil, startFailed(op, id, err)
	}
	live, err := open()
	if err != nil {
		return nil, startFailed(op, id, err)
	}
	h, err := r.spawn(live, spec, resumed)
	if err != nil {
		r.releaseQuietly(live)
		return nil, startFailed(op, id, err)
	}
	if err := r.publish(h); err != nil {
		r.rollback(h)
		return nil, err
	}
	return h, nil
}

// reserve claims id for one create or resume.
func (r *Registry) reserve(id string) (chan struct{}, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.refusal.Load() != nil:
		return nil, *r.refusal.Load()
	case r.closed:
		return nil, closedFor(id)
	case r.agents[id] != nil || r.reserved[id] != nil:
		return nil, exists(id)
	}
	done := make(chan struct{})
	r.reserved[id] = done
	return done, nil
}

func (r *Registry) unreserve(id string, done chan struct{}) {
	r.mu.Lock()
	delete(r.reserved, id)
	r.mu.Unlock()
	close(done)
}

// spawn builds the agent and its actor over live; a factory-built agent
// without a route gets the registry's.
func (r *Registry) spawn(live *session.Live, spec Spec, resumed bool) (*Handle, error) {
	header := live.Header()
	if spec.Agent == nil && spec.Provider == "" && spec.Model == "" {
		spec.Provider, spec.Model = r.provider, r.model
	}
	h := &Handle{
		reg: r, id: header.ID, incarnation: r.incarnation.Add(1), header: header, spec: spec,
	}
	impl := spec.Agent
	if impl == nil {
		impl = r.newAgent(spec.options(header, resumed))
	}
	if impl == nil {
		return nil, unbuildable(header.ID, spec.Provider, spec.Model)
	}
	var under *activation.Activation
	if spec.Under != nil {
		under = spec.Under.act
	}
	act, err := activation.Start(activation.Config{
		Agent: impl, Session: live, Provider: spec.Provider, Model: spec.Model,
		Actors:    r.actors,
		Subagents: func() agent.Subagents { return r.subagentsFor(h) },
		Observer:  h.observe,
		Logger:    r.logger,
		Parent:    under,
		Release:   func() { h.releaseStep(live) },
	})
	if err != nil {
		return nil, err
	}
	h.act = act
	act.OnFenced(func() { r.fenced(h) })
	return h, nil
}

// fenced disposes h, whose session's lease was fenced, unless an owner
// runs it (the subagent service disposes its own children): it can write
// nothing more, and once it has left the registry a later prompt resumes
// it under a fresh lease. The disposal runs on its own goroutine.
func (r *Registry) fenced(h *Handle) {
	if h.spec.Owner != nil {
		return
	}
	r.logger.Warn("actors: agent stopped: its session's lease was fenced", "agent", h.id, "code", string(fault.Fenced))
	go func() { _ = h.Dispose(context.Background()) }() // its release error is the fence, logged above
}

func (r *Registry) subagentsFor(h *Handle) agent.Subagents {
	fn := r.subagents.Load()
	if fn == nil {
		return nil
	}
	return (*fn)(h)
}

// publish makes h the live entry for its id and emits agent/created. An
// h whose actor stopped (and released it) since its spawn fails with
// fault.ActivationClosing: publishing it would leave an entry no stop
// removes.
func (r *Registry) publish(h *Handle) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return closedFor(h.id)
	}
	if h.released {
		r.mu.Unlock()
		return stoppedUnpublished(h.id)
	}
	r.agents[h.id] = h
	r.mu.Unlock()
	h.act.Emit(inbox.Event{Type: EventCreated})
	return nil
}

// rollback undoes an unpublished spawn: its stop releases the session.
func (r *Registry) rollback(h *Handle) {
	if err := h.act.Dispose(context.Background()); err != nil {
		r.logger.Error("actors: rollback: agent dispose failed", "agent", h.id, "err", err)
	}
}

func (r *Registry) releaseQuietly(live *session.Live) {
	if err := r.sessions.Release(context.Background(), live); err != nil {
		r.logger.Error("actors: rollback: session release failed", "session", live.Header().ID, "err", err)
	}
}

// unpublish removes h if it is still the live entry for its id, and
// reports whether it was; either way h can no longer be published.
func (r *Registry) unpublish(h *Handle) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	h.released = true
	if r.agents[h.id] != h {
		return false
	}
	delete(r.agents, h.id)
	return true
}

// Close stops creating and resuming agents (later calls fail with
// fault.RegistryClosed), waits for the creates and resumes under way to publish or
// roll back, then disposes every live agent child-first: all agents of the
// deepest live lineage level together, then the next level up, so no agent
// is disposed before its live descendants. It blocks until then or ctx is
// done; calling it again continues. A failed dispose (a failed final flush:
// that agent is unregistered anyway) does not stop it: the levels above are
// still disposed. It returns the dispose errors joined.
func (r *Registry) Close(ctx context.Context) error {
	if err := r.closeAdmission(ctx); err != nil {
		return err
	}
	var errs []error
	for _, level := range r.levels() {
		if err := disposeAll(ctx, level); err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
		}
	}
	return errors.Join(errs...)
}

// closeAdmission sets closed and waits for reservations to settle.
func (r *Registry) closeAdmission(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	pending := make([]chan struct{}, 0, len(r.reserved))
	for _, done := range r.reserved {
		pending = append(pending, done)
	}
	r.mu.Unlock()
	for _, done := range pending {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// levels groups the live agents by live lineage depth, deepest first.
func (r *Registry) levels() [][]*Handle {
	var levels [][]*Handle
	for _, h := range r.List() {
		depth := len(r.LiveLineage(h)) - 1
		for len(levels) <= depth {
			levels = append(levels, nil)
		}
		levels[depth] = append(levels[depth], h)
	}
	slices.Reverse(levels)
	return levels
}

// disposeParallelism bounds the disposals Close runs at once: they mostly
// wait (for a turn to end, an actor to stop, a flush), but a goroutine per
// agent would cost a stack per agent at 100,000 agents.
const disposeParallelism = 256

// disposeAll disposes handles, up to disposeParallelism at a time, and
// returns their errors joined.
func disposeAll(ctx context.Context, handles []*Handle) error {
	errs := make([]error, len(handles))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(disposeParallelism, len(handles)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = handles[i].Dispose(ctx)
			}
		})
	}
	for i := range handles {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

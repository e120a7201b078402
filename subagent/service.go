package subagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
)

// Service is the subagent seam: the provider
// registry, one-shot and continuable delegation, follow-ups, scoped drains,
// the durable catalog and lifecycle events. Its methods are safe for
// concurrent use.
type Service struct {
	rt        *actors.Runtime
	q         query.Querier
	logger    *slog.Logger
	events    *emitter
	providers *providers
	m         *manager.Manager // nil: no continuation manager
}

// Option configures New.
type Option func(*config)

type config struct {
	logger *slog.Logger
}

// WithLogger sets the logger for contained listener failures and teardown
// warnings (default: the runtime's logger).
func WithLogger(logger *slog.Logger) Option { return func(c *config) { c.logger = logger } }

// New returns the service. With a runtime it binds the continuation
// manager (its manager-wide drain runs first when the runtime closes) and
// installs the agent.Subagents capability of every agent, bound to the
// calling agent (spawn uses the provider named "spawn"). A runtime has at
// most one service: New fails with actors.ErrSubagentsInstalled (a
// fault.DuplicateProvider) when another one is bound, and with the manager's error when it cannot start.
// rt may be nil: continuable operations then fail with
// CONTINUATION_UNAVAILABLE and drains are no-ops. q may be nil:
// ListChildren then fails with SUBAGENT_CONTROL_SESSION_QUERY_UNAVAILABLE.
// New does not block.
func New(rt *actors.Runtime, q query.Querier, opts ...Option) (*Service, error) {
	cfg := config{}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
		if rt != nil {
			cfg.logger = rt.Logger()
		}
	}
	s := &Service{rt: rt, q: q, logger: cfg.logger, events: newEmitter(cfg.logger)}
	s.providers = newProviders(s.events)
	if rt == nil {
		return s, nil
	}
	if err := s.bindManager(cfg); err != nil {
		return nil, err
	}
	return s, nil
}

// bindManager starts the continuation manager, then claims the runtime's
// subagent capability; when another service holds it, the new manager is
// closed again (it owns nothing yet).
func (s *Service) bindManager(cfg config) error {
	m, err := manager.New(manager.Options{
		Runtime: s.rt, Prepare: s.prepareContinuable, Started: s.epochStarted, Ended: s.epochEnded,
		Logger: cfg.logger,
	})
	if err != nil {
		return err
	}
	s.m = m
	if _, err := s.rt.InstallSubagents(func(self *parent.Handle) agent.Subagents { return capability{s, self} }); err != nil {
		return errors.Join(err, m.Close(context.Background()))
	}
	return nil
}

// RegisterProvider registers p under its name and emits
// subagent/provider-added; remove unregisters it (idempotent) and emits
// subagent/provider-removed. A duplicate name fails at once with
// DUPLICATE_PROVIDER. A panicking provider-added listener rolls the
// registration back and its panic is returned. Removal blocks new starts
// and preparations only: runs already returned and cold resumes of
// children it created are unaffected. It does not block.
func (s *Service) RegisterProvider(p Provider) (remove func(), err error) {
	return s.providers.register(p)
}

// GetProvider returns the provider registered under name, or nil. It does
// not block.
func (s *Service) GetProvider(name string) Provider { return s.providers.get(name) }

// List returns the registered provider names in insertion order. It does
// not block.
func (s *Service) List() []string { return s.providers.list() }

// Subscribe adds a lifecycle listener (subagent/start, subagent/end,
// subagent/provider-added, subagent/provider-removed) and returns its
// idempotent cancel. Listeners run one at a time on the emitting goroutine;
// a panicking listener is logged and its peers still run (except for
// provider-added, whose panic rolls the registration back). A listener must
// not block on the service.
func (s *Service) Subscribe(fn func(Event)) (cancel func()) { return s.events.subscribe(fn) }

// StartContinuable establishes a durable continuable child and delivers its
// first prompt; see manager.Manager.StartContinuable for the order of
// checks. It returns {ChildID, MessageID} at inbox acceptance and blocks
// the caller until then. It fails with CONTINUATION_UNAVAILABLE when the
// service has no runtime.
func (s *Service) StartContinuable(ctx context.Context, spec manager.StartSpec) (manager.Started, error) {
	if s.m == nil {
		return manager.Started{}, continuationUnavailable()
	}
	return s.m.StartContinuable(ctx, spec)
}

// Followup delivers content from the exact live direct parent p to its
// continuable child as the child's next FIFO turn and returns the accepted
// MessageID (the child is woken or cold-resumed as needed); see
// manager.Manager.Followup. It blocks the caller until acceptance. It fails
// with CONTINUATION_UNAVAILABLE when the service has no runtime.
func (s *Service) Followup(ctx context.Context, p *parent.Handle, childID string, content []event.Block, source event.Source) (string, error) {
	if s.m == nil {
		return "", continuationUnavailable()
	}
	return s.m.Followup(ctx, p, childID, content, source)
}

// WaitChild blocks until the resident epoch of continuable child childID
// ends (its subagent/end was delivered) and returns that end with ok true;
// when none is resident it returns at once the end of childID's most
// recent epoch that ended in this runtime, kept while an agent with the
// child's parent id is live here, or ok false when there is none (see
// manager.Manager.WaitEpoch). It never polls. A cancelled ctx is CANCELLED. It fails with
// CONTINUATION_UNAVAILABLE when the service has no runtime.
func (s *Service) WaitChild(ctx context.Context, childID string) (end manager.RunEndInfo, ok bool, err error) {
	if s.m == nil {
		return end, false, continuationUnavailable()
	}
	return s.m.WaitEpoch(ctx, childID)
}

// DrainContinuableDescendants closes admission below the exact live
// parents and disposes their continuable descendants child-first; see
// manager.Manager.DrainContinuableDescendants. It blocks until the selected
// forests are released or ctx is done. Without a runtime it is a no-op.
func (s *Service) DrainContinuableDescendants(ctx context.Context, parents []*parent.Handle) error {
	if s.m == nil {
		return nil
	}
	return s.m.DrainContinuableDescendants(ctx, parents)
}

// ListChildren lists parentID's direct continuable children and per-child
// diagnostics in trace order (createdAt, then id) from the session query
// alone: it never loads, resumes or touches an Activation, and needs no
// manager. An unknown parent fails with SESSION_QUERY_SESSION_NOT_FOUND; a
// cancelled ctx with CANCELLED; a service without a query with
// SUBAGENT_CONTROL_SESSION_QUERY_UNAVAILABLE. It blocks on the reads.
func (s *Service) ListChildren(ctx context.Context, parentID string) ([]query.Entry, error) {
	return s.ListChildrenFrom(ctx, nil, parentID)
}

// ListChildrenFrom is ListChildren answered by catalog (a derived index
// that answers as the unindexed reader does), with the same errors; a nil
// catalog is the service's own query.
func (s *Service) ListChildrenFrom(ctx context.Context, catalog query.Catalog, parentID string) ([]query.Entry, error) {
	if s.rt != nil {
		if err := s.rt.Err(); err != nil {
			return nil, err
		}
	}
	if catalog != nil {
		return catalog.ListChildren(ctx, parentID)
	}
	return query.ListChildren(ctx, s.q, parentID)
}

// prepareContinuable resolves a provider's continuable capability for the
// manager: NO_PROVIDER, UNSUPPORTED_CAPABILITY, or the provider's seed.
func (s *Service) prepareContinuable(ctx context.Context, name, childID string, p *parent.Handle) ([]session.Event, error) {
	provider := s.providers.get(name)
	if provider == nil {
		return nil, manager.NoProvider(name)
	}
	preparer, ok := provider.(ContinuablePreparer)
	if !ok {
		return nil, unsupportedContinuable(name)
	}
	spec, err := preparer.PrepareContinuable(ctx, ContinuableRequest{SessionID: childID, Parent: p})
	return spec.Seed, err
}

// epochStarted emits a continuable epoch's subagent/start to the service's
// listeners (contained).
func (s *Service) epochStarted(info manager.RunInfo) error {
	s.events.emitContained(&StartEvent{RunInfo: info})
	return nil
}

// epochEnded emits a continuable epoch's subagent/end to the service's
// listeners (contained).
func (s *Service) epochEnded(info manager.RunEndInfo) {
	s.events.emitContained(&EndEvent{RunEndInfo: info})
}

// capability is agent.Subagents bound to one calling agent.
type capability struct {
	s    *Service
	self *parent.Handle
}

// Spawn starts a continuable child of the calling agent through the
// "spawn" provider; it returns at the child's inbox acceptance.
func (c capability) Spawn(ctx context.Context, label, prompt string) (string, string, error) {
	return c.start(ctx, SpawnName, label, prompt)
}

// Fork starts a continuable child of the calling agent through the "fork"
// provider (seeded with the agent's completed turns); it returns at the
// child's inbox acceptance.
func (c capability) Fork(ctx context.Context, label, prompt string) (string, string, error) {
	return c.start(ctx, ForkName, label, prompt)
}

func (c capability) start(ctx context.Context, provider, label, prompt string) (string, string, error) {
	started, err := c.s.StartContinuable(ctx, manager.StartSpec{
		Provider: provider, Label: label,
		Request: manager.Request{Prompt: event.Text(prompt), Parent: c.self},
	})
	return started.ChildID, started.MessageID, err
}

// Wait waits for the end of childID's epoch (see Service.WaitChild) when
// the calling agent is its direct parent in the durable catalog; another
// agent's child is UNAUTHORIZED.
func (c capability) Wait(ctx context.Context, childID string) (agent.ChildEnd, bool, error) {
	children, err := c.Children(ctx)
	if err != nil {
		return agent.ChildEnd{}, false, err
	}
	if !slices.ContainsFunc(children, func(ch agent.Child) bool { return ch.ID == childID }) {
		return agent.ChildEnd{}, false, fault.New(fault.Unauthorized,
			fmt.Sprintf("subagent: agent %q is not the direct parent of %q", c.self.ID(), childID), nil)
	}
	end, ok, err := c.s.WaitChild(ctx, childID)
	return childEnd(end), ok, err
}

// Children lists the calling agent's direct continuable children from the
// durable catalog (see Service.ListChildren).
func (c capability) Children(ctx context.Context) ([]agent.Child, error) {
	entries, err := c.s.ListChildren(ctx, c.self.ID())
	if err != nil {
		return nil, err
	}
	children := make([]agent.Child, len(entries))
	for i, e := range entries {
		children[i] = childOf(e)
	}
	return children, nil
}

// childEnd is an epoch's end as agent code reads it.
func childEnd(e manager.RunEndInfo) agent.ChildEnd {
	return agent.ChildEnd{StopReason: e.StopReason, LastAssistantMessage: e.LastAssistantMessage, DiscardedFollowups: e.DiscardedFollowups}
}

// childOf is a catalog entry as agent code reads it.
func childOf(e query.Entry) agent.Child {
	if e.Kind == query.KindDiagnostic {
		return agent.Child{ID: e.ID, Diagnostic: e.Reason}
	}
	return agent.Child{ID: e.ID, Label: e.Label, Status: e.Status}
}

// Send delivers text to a child of the calling agent, attributed
// {kind:"coordinator", senderSessionId}; it returns at inbox acceptance.
func (c capability) Send(ctx context.Context, childID, text string) (string, error) {
	source := event.Source{Kind: "coordinator", SenderSessionID: c.self.ID()}
	return c.s.Followup(ctx, c.self, childID, event.Text(text), source)
}

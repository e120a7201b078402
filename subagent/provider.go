package subagent

import (
	"context"
	"slices"
	"sync"

	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/session"
)

// Capabilities are the one-shot request features a provider enforces.
// Start rejects a request needing an undeclared one with
// UNSUPPORTED_CAPABILITY before calling the provider, checking them in this
// order: OutputSchema, DepthLimit (maxDepth), ToolFilter, Persona.
type Capabilities struct {
	// OutputSchema: the provider returns a result matching
	// StartRequest.OutputSchema.
	OutputSchema bool
	// DepthLimit: the provider refuses a child deeper than
	// StartRequest.MaxDepth (ChildDepth does the arithmetic).
	DepthLimit bool
	// ToolFilter: the provider applies StartRequest.ToolFilter.
	ToolFilter bool
	// Persona: the provider applies StartRequest.Persona.
	Persona bool
}

// Provider runs children of a parent agent, registered under its name with
// Service.RegisterProvider beside the in-process spawn and fork (NewSpawn,
// NewFork). The provider decides where the child runs: in this process
// (the run's LocalAgent is the child's handle) or elsewhere (LocalAgent is
// nil). A provider that also implements ContinuablePreparer can seed
// continuable children. Its methods must be safe for concurrent use.
type Provider interface {
	// Name is the provider's unique registry key. It must not change.
	Name() string
	// Capabilities declares which one-shot request features it enforces.
	// It must not block.
	Capabilities() Capabilities
	// InheritsParentContext is descriptive only: whether the child sees the
	// parent's completed conversation (fork does, spawn does not). It must
	// not block.
	InheritsParentContext() bool
	// Start runs a one-shot child of req.Parent and returns once the child
	// is published (NewRun builds the run). On error the provider has
	// rolled every resource back. The caller owns the returned run and
	// disposes it on every path. ctx is the run's cancellation channel:
	// done before publication, Start fails; done after, the run's remaining
	// work is cancelled and its result settles (stop reason aborted).
	Start(ctx context.Context, req StartRequest) (*Run, error)
}

// ContinuablePreparer is the optional continuable capability of a
// Provider: StartContinuable through a provider without it fails with
// UNSUPPORTED_CAPABILITY.
type ContinuablePreparer interface {
	// PrepareContinuable returns the data a new continuable child is seeded
	// with; the manager owns identity, creation, delivery and disposal. It
	// runs off the manager's mailbox and may block on ctx.
	PrepareContinuable(ctx context.Context, req ContinuableRequest) (ContinuableSpec, error)
}

// ContinuableRequest is what a provider's continuable preparation gets: the
// new child's id and the parent.
type ContinuableRequest struct {
	// SessionID is the id the manager reserved for the child.
	SessionID string
	// Parent is the exact live parent starting the child.
	Parent *parent.Handle
}

// ContinuableSpec is detached data, never a capability: the inherited event
// prefix a continuable child starts from (nil for a fresh child).
type ContinuableSpec struct {
	Seed []session.Event
}

// DelegationDepth is the live agent p's delegation depth: the larger of its
// header's delegationDepth and its runtime subagent depth (0 for a
// top-level agent). It fails when p's runtime depth is not a non-negative
// safe integer. It never blocks.
func DelegationDepth(p *parent.Handle) (int, error) {
	if p == nil {
		return 0, manager.ErrNoParent
	}
	child, err := manager.ChildDepth(p, nil)
	return child - 1, err
}

// ChildDepth is the delegation depth of a new child of p under an optional
// absolute cap maxDepth: p's depth plus one, fault.DepthExceeded when that
// exceeds maxDepth. A provider declaring DepthLimit calls it in Start and
// records the result in the child's header. It never blocks.
func ChildDepth(p *parent.Handle, maxDepth *int) (int, error) {
	if p == nil {
		return 0, manager.ErrNoParent
	}
	return manager.ChildDepth(p, maxDepth)
}

// providers is the registry: names in insertion order.
type providers struct {
	mu     sync.Mutex
	byName map[string]Provider
	order  []string
	events *emitter
}

func newProviders(events *emitter) *providers {
	return &providers{byName: map[string]Provider{}, events: events}
}

// register adds p and emits subagent/provider-added; a panicking listener
// rolls the registration back and its panic is returned.
func (r *providers) register(p Provider) (remove func(), err error) {
	name := p.Name()
	if err := r.insert(name, p); err != nil {
		return nil, err
	}
	var once sync.Once
	remove = func() { once.Do(func() { r.remove(name) }) }
	if err := r.events.emitUncontained(&providerAddedEvent{provider: p}); err != nil {
		remove()
		return nil, err
	}
	return remove, nil
}

func (r *providers) insert(name string, p Provider) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byName[name]; dup {
		return duplicateProvider(name)
	}
	r.byName[name] = p
	r.order = append(r.order, name)
	return nil
}

// remove deletes name, then emits subagent/provider-removed (contained).
func (r *providers) remove(name string) {
	r.mu.Lock()
	delete(r.byName, name)
	r.order = slices.DeleteFunc(r.order, func(n string) bool { return n == name })
	r.mu.Unlock()
	r.events.emitContained(&providerRemovedEvent{name: name})
}

func (r *providers) get(name string) Provider {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byName[name]
}

func (r *providers) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.order)
}

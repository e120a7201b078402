package subagent

import (
	"context"
	"slices"
	"sync"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/session"
)

// capabilities are the one-shot request features a provider enforces. Start
// rejects a request needing an undeclared one before calling the provider,
// checking them in this order: outputSchema, depthLimit (maxDepth),
// toolFilter, persona.
type capabilities struct {
	outputSchema bool
	depthLimit   bool
	toolFilter   bool
	persona      bool
}

// Provider runs children of a parent agent: trusted, in-process code
// registered by name. It is sealed: NewSpawn and NewFork return the two
// there are, and only this package implements it.
type Provider interface {
	// providerName is the provider's unique registry key.
	providerName() string
	// features declares which one-shot request features it enforces.
	features() capabilities
	// inheritsParentContext is descriptive only: whether the child sees the
	// parent's completed conversation (fork does, spawn does not).
	inheritsParentContext() bool
	// startRun runs a one-shot child and returns once the child is
	// published. On error the provider has rolled every local resource
	// back. The caller owns the returned run and must Dispose it on every
	// path. ctx is the run's cancellation channel: done before publication,
	// startRun fails; done after, the run's remaining work is cancelled.
	startRun(ctx context.Context, req StartRequest) (*Run, error)
}

// continuablePreparer is the optional continuable capability: a provider
// implementing it can seed continuable children. Whether a provider
// implements it is the capability check.
type continuablePreparer interface {
	// PrepareContinuable returns the data a new continuable child is seeded
	// with; the manager owns identity, creation, delivery and disposal.
	PrepareContinuable(ctx context.Context, req continuableCreateRequest) (continuableCreateSpec, error)
}

// continuableCreateRequest is what a provider's continuable preparation
// gets: the new child's id and the parent.
type continuableCreateRequest struct {
	// SessionID is the id the manager reserved for the child.
	SessionID string
	// Parent is the exact live parent starting the child.
	Parent *parent.Handle
}

// continuableCreateSpec is detached data, never a capability: the inherited
// event prefix a continuable child starts from (nil for a fresh child).
type continuableCreateSpec struct {
	Seed []session.Event
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
	if err := r.insert(p); err != nil {
		return nil, err
	}
	var once sync.Once
	remove = func() { once.Do(func() { r.remove(p.providerName()) }) }
	if err := r.events.emitUncontained(&providerAdded{Provider: p}); err != nil {
		remove()
		return nil, err
	}
	return remove, nil
}

func (r *providers) insert(p Provider) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byName[p.providerName()]; dup {
		return duplicateProvider(p.providerName())
	}
	r.byName[p.providerName()] = p
	r.order = append(r.order, p.providerName())
	return nil
}

// remove deletes name, then emits subagent/provider-removed (contained).
func (r *providers) remove(name string) {
	r.mu.Lock()
	delete(r.byName, name)
	r.order = slices.DeleteFunc(r.order, func(n string) bool { return n == name })
	r.mu.Unlock()
	r.events.emitContained(&providerRemoved{Name: name})
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

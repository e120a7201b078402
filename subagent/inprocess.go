package subagent

import (
	"context"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// Names of the in-process providers.
const (
	SpawnName = "spawn"
	ForkName  = "fork"
)

// NewSpawn returns the "spawn" provider: a fresh in-process child that sees
// nothing of its parent's conversation. It supports continuable children.
func NewSpawn(rt *actors.Runtime) Provider { return &inProcess{name: SpawnName, rt: rt} }

// NewFork returns the "fork" provider: an in-process child seeded with its
// parent's completed-turn prefix (the header's seedLength counts it). It
// supports continuable children.
func NewFork(rt *actors.Runtime) Provider { return &inProcess{name: ForkName, rt: rt, fork: true} }

type inProcess struct {
	name string
	rt   *actors.Runtime
	fork bool
}

// Name is "spawn" or "fork".
func (p *inProcess) Name() string { return p.name }

// Capabilities: the in-process providers enforce maxDepth and pass the
// tool filter and persona to the child's agent (the model agent applies
// them).
func (p *inProcess) Capabilities() Capabilities {
	return Capabilities{OutputSchema: true, DepthLimit: true, ToolFilter: true, Persona: true}
}

// InheritsParentContext is true for fork.
func (p *inProcess) InheritsParentContext() bool { return p.fork }

// PrepareContinuable seeds a fork child with the parent's completed-turn
// prefix and a spawn child with nothing. It does not block.
func (p *inProcess) PrepareContinuable(_ context.Context, req ContinuableRequest) (ContinuableSpec, error) {
	if !p.fork {
		return ContinuableSpec{}, nil
	}
	return ContinuableSpec{Seed: completedPrefix(req.Parent.Session().Events())}, nil
}

// completedPrefix is events up to and including the last turn/end: the
// parent's completed turns, without a turn still open. It is nil when no
// turn completed.
func completedPrefix(events []session.Event) []session.Event {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == vocab.TypeTurnEnd {
			return events[:i+1]
		}
	}
	return nil
}

// Start publishes a one-shot child of req.Parent (parentSession set,
// delegationDepth one deeper, fork: seeded) and delivers the prompt. It
// blocks until the child is published. ctx done before publication fails
// Start; done after it cancels the child's turn. The result settles when
// the child is idle again, from the events the child appended itself.
func (p *inProcess) Start(ctx context.Context, req StartRequest) (*Run, error) {
	spec, err := p.createSpec(req)
	if err != nil {
		return nil, err
	}
	h, err := p.rt.StartAgent(ctx, spec)
	if err != nil {
		return nil, err
	}
	boundary := h.Session().Len()
	run, settle := NewRun(h.ID(), h, h.Dispose)
	stop := context.AfterFunc(ctx, func() { h.Activation().Cancel(agent.CancelCause{Kind: agent.CauseUser}, false) })
	if ctx.Err() == nil {
		if _, err := h.Followup(context.Background(), req.Prompt, event.Source{Kind: "user"}); err != nil {
			stop()
			_ = h.Dispose(context.Background())
			return nil, err
		}
	}
	go func() {
		defer stop()
		_ = h.Activation().WhenIdle(context.Background())
		output, reason := manager.RunOutcome(h.Session().Events()[boundary:], ctx.Err() != nil)
		settle(structured(Result{Output: output, StopReason: reason}, req.OutputSchema), nil)
	}()
	return run, nil
}

// createSpec is the one-shot child's header, seed and route.
func (p *inProcess) createSpec(req StartRequest) (parent.CreateSpec, error) {
	if req.Parent == nil {
		return parent.CreateSpec{}, manager.ErrNoParent
	}
	depth, err := manager.ChildDepth(req.Parent, req.MaxDepth)
	if err != nil {
		return parent.CreateSpec{}, err
	}
	parentSpec := req.Parent.Spec()
	spec := parent.CreateSpec{
		Header: session.Header{Cwd: req.Parent.Header().Cwd, ParentSession: req.Parent.ID(), DelegationDepth: depth},
		Spec: parent.Spec{Provider: parentSpec.Provider, Model: parentSpec.Model, MaxTokens: parentSpec.MaxTokens,
			SubagentDepth: depth, Persona: req.Persona, ToolFilter: req.ToolFilter, OutputSchema: req.OutputSchema, Owner: req.Parent},
	}
	if p.fork {
		if prefix := completedPrefix(req.Parent.Session().Events()); len(prefix) > 0 {
			n := len(prefix)
			spec.Header.SeedLength, spec.Seed = &n, prefix
		}
	}
	return spec, nil
}

package manager

import (
	"cmp"
	"context"
	"encoding/json"
	"time"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// Origin is the header origin of continuable children.
const Origin = "subagent"

// StartContinuable establishes a durable continuable child of
// spec.Request.Parent and delivers its first prompt, in this order:
// the DRAINING gate, session persistence present, maxDepth valid, a fresh
// uuid, the child's depth, the descriptor snapshot (model route resolved
// from the parent), provider preparation (NO_PROVIDER,
// UNSUPPORTED_CAPABILITY), the seed (inherited prefix plus the
// descriptor), then under the child's serialization: materialization,
// ownership recorded in the parent's Activation before the child can run,
// and the prompt's admission. It returns {ChildID, MessageID} once the
// child's inbox accepted the prompt, before the turn starts or the prompt
// is logged. Any failure before acceptance returns no ids and leaves no
// Activation, no live child and no ownership entry. ctx governs
// preparation, materialization and admission only; it blocks the caller
// until the verdict.
func (m *Manager) StartContinuable(ctx context.Context, spec StartSpec) (Started, error) {
	if spec.Request.Parent == nil {
		return Started{}, ErrNoParent
	}
	o := &op{kind: opStart, ctx: ctx, parent: spec.Request.Parent, spec: spec,
		content: spec.Request.Prompt, source: event.Source{Kind: "user"}}
	id, err := m.call(ctx, startRequest{o})
	if err != nil {
		return Started{}, err
	}
	return Started{ChildID: o.childID, MessageID: id}, nil
}

// startPlan is what the synchronous span of a start decided.
type startPlan struct {
	childID    string
	depth      int
	descriptor descriptor.Data
	route      parent.Spec
}

// A start takes these steps; each runs in the actor, and the I/O between
// them runs off it and comes back as a message:
//
//  1. start: the checks before preparation (planStart) and a fresh id;
//     the provider's preparation starts off the actor.
//  2. prepared: the caller's context and the DRAINING gate again, the
//     child's creation (its header and seed); the child's lock.
//  3. startLocked: the caller's context, the DRAINING gate and the
//     parent's authority, then materialization (followup.go): the
//     session created off the actor, the Activation installed, owned by
//     the parent and published with subagent/start.
//  4. submit (followup.go): the prompt's admission, whose final step
//     checks authority again; a failure disposes the fresh child first.

// start is step 1.
func (m *core) start(o *op) {
	plan, err := m.planStart(o.spec)
	if err != nil {
		m.finish(o, "", err)
		return
	}
	o.childID = plan.childID
	o.ms = materializeSpec{childID: plan.childID, provider: o.spec.Provider, parent: o.parent}
	m.emit(prepareSeed{o, plan})
}

// prepareOff runs the provider's preparation (off the actor).
func (m *Manager) prepareOff(o *op, plan startPlan) {
	seed, err := m.prepareSeed(o.ctx, o.spec.Provider, plan.childID, o.parent)
	if err != nil {
		m.send(prepared{op: o, err: err})
		return
	}
	m.send(prepared{op: o, create: plan.createSpec(o.parent, seed)})
}

// prepared is step 2.
func (m *core) prepared(msg prepared) {
	o := msg.op
	err := msg.err
	if err == nil {
		err = m.admitWithContext(o.ctx, o.parent)
	}
	if err != nil {
		m.finish(o, "", err)
		return
	}
	o.ms.create = msg.create
	m.lock(o)
}

// startLocked is step 3.
func (m *core) startLocked(o *op) {
	if err := m.admission(o, readParent(o.ms.create.Header.ParentSession)); err != nil {
		m.finish(o, "", err)
		return
	}
	m.materialize(o)
}

// planStart is the synchronous span before preparation.
func (m *core) planStart(spec StartSpec) (startPlan, error) {
	req := spec.Request
	if err := m.admit(req.Parent); err != nil {
		return startPlan{}, err
	}
	if !m.env.hasStore() {
		return startPlan{}, persistenceUnavailable()
	}
	if err := AssertMaxDepth(req.MaxDepth); err != nil {
		return startPlan{}, err
	}
	plan := startPlan{childID: m.env.newID()}
	var err error
	if plan.depth, err = ChildDepth(req.Parent, req.MaxDepth); err != nil {
		return startPlan{}, err
	}
	plan.route = childSpec(req.Parent.Spec(), req, plan.depth)
	plan.descriptor, err = descriptor.Snapshot(descriptor.Data{
		Provider: spec.Provider, Label: spec.Label,
		AgentProvider: plan.route.Provider, AgentModel: plan.route.Model,
		Persona: req.Persona, ToolFilter: req.ToolFilter,
	})
	return plan, err
}

// childSpec is the fresh child's agent options: the parent's provider,
// model (as the parent runs them: empty means vocab.DefaultProvider and
// DefaultModel, so the descriptor always records the route) and max
// tokens, overridden by the request's route, plus the child's depth and
// its composition (persona, tool filter).
func childSpec(parentSpec parent.Spec, req Request, depth int) parent.Spec {
	spec := parent.Spec{
		Provider:  cmp.Or(parentSpec.Provider, vocab.DefaultProvider),
		Model:     cmp.Or(parentSpec.Model, vocab.DefaultModel),
		MaxTokens: parentSpec.MaxTokens,
	}
	if o := req.AgentOptions; o != nil {
		spec.Provider = cmp.Or(o.Provider, spec.Provider)
		spec.Model = cmp.Or(o.Model, spec.Model)
	}
	spec.SubagentDepth = depth
	spec.Persona, spec.ToolFilter = req.Persona, req.ToolFilter
	return spec
}

// prepareSeed runs the provider's continuable preparation (off the actor).
func (m *Manager) prepareSeed(ctx context.Context, provider, childID string, p *parent.Handle) ([]session.Event, error) {
	if m.prepare == nil {
		return nil, NoProvider(provider)
	}
	return m.prepare(ctx, provider, childID, p)
}

// createSpec builds the child's creation: its header and its seed, the
// inherited prefix (closed by session/end-seed) followed by the descriptor.
// The header's seedLength counts the inherited events only.
func (plan startPlan) createSpec(p *parent.Handle, inherited []session.Event) *parent.CreateSpec {
	header := session.Header{
		ID: plan.childID, Cwd: p.Header().Cwd, ParentSession: p.ID(),
		Origin: Origin, DelegationDepth: plan.depth,
	}
	seed := []session.Event{}
	n := len(inherited)
	if n > 0 && inherited[n-1].Type == vocab.TypeSessionEndSeed {
		n--
	}
	if n > 0 {
		header.SeedLength = &n
		seed = append(seed, inherited[:n]...)
		seed = append(seed, marker(vocab.TypeSessionEndSeed, n, json.RawMessage("{}")))
	}
	data, _ := json.Marshal(plan.descriptor) // a Snapshot always marshals
	seed = append(seed, marker(vocab.TypeSubagentDescriptor, len(seed), data))
	return &parent.CreateSpec{Header: header, Seed: seed, Spec: plan.route}
}

func marker(typ string, seq int, data json.RawMessage) session.Event {
	return session.Event{Type: typ, Seq: int64(seq), Time: time.Now().UnixMilli(), Data: data}
}

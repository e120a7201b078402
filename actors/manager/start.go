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
	"github.com/google/uuid"
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
	return call(m, ctx, func(ctx context.Context, reply func(Started, error)) { m.start(ctx, spec, reply) })
}

// startPlan is what the synchronous span of a start decided.
type startPlan struct {
	childID    string
	depth      int
	descriptor descriptor.Data
	route      parent.Spec
}

// start runs inside the actor.
func (m *Manager) start(ctx context.Context, spec StartSpec, reply func(Started, error)) {
	p := spec.Request.Parent
	plan, err := m.planStart(spec)
	if err != nil {
		reply(Started{}, err)
		return
	}
	type prepared struct {
		seed []session.Event
		err  error
	}
	async(m, func() prepared {
		seed, err := m.prepareSeed(ctx, spec.Provider, plan.childID, p)
		return prepared{seed, err}
	}, func(r prepared) {
		if r.err == nil {
			r.err = m.admitWithContext(ctx, p)
		}
		if r.err != nil {
			reply(Started{}, r.err)
			return
		}
		create := plan.createSpec(p, r.seed)
		m.withChildLock(ctx, plan.childID, func(release func()) {
			m.materializeAndSubmit(ctx, spec, create, func(s Started, err error) {
				release()
				reply(s, err)
			})
		}, func(err error) { reply(Started{}, err) })
	})
}

// planStart is the synchronous span before preparation.
func (m *Manager) planStart(spec StartSpec) (startPlan, error) {
	req := spec.Request
	if err := m.admit(req.Parent); err != nil {
		return startPlan{}, err
	}
	if m.sessions.Store() == nil {
		return startPlan{}, persistenceUnavailable()
	}
	if err := AssertMaxDepth(req.MaxDepth); err != nil {
		return startPlan{}, err
	}
	plan := startPlan{childID: uuid.NewString()}
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

// materializeAndSubmit is the locked section of a start: materialize the
// fresh child, then submit its prompt with source {kind:"user"}.
func (m *Manager) materializeAndSubmit(ctx context.Context, spec StartSpec, create *parent.CreateSpec, done func(Started, error)) {
	p := spec.Request.Parent
	if err := m.admitWithContext(ctx, p); err != nil {
		done(Started{}, err)
		return
	}
	ms := materializeSpec{childID: create.Header.ID, provider: spec.Provider, parent: p, create: create}
	m.materialize(ctx, ms, func(a *activation, err error) {
		if err != nil {
			done(Started{}, err)
			return
		}
		m.submitMaterialized(ctx, a, spec.Request.Prompt, event.Source{Kind: "user"}, p, func(id string, err error) {
			if err != nil {
				done(Started{}, err)
				return
			}
			done(Started{ChildID: a.childID, MessageID: id}, nil)
		})
	})
}

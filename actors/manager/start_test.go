package manager

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/internal/vocab"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// Ids at inbox acceptance, before the turn or the log.
func TestStartReturnsBothIdsAtInboxAcceptance(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	type enqueued struct {
		agentID, messageID string
		promptLogged       bool
	}
	var mu sync.Mutex
	var seen []enqueued
	f.rt.Registry().Subscribe(func(e parent.Event) {
		if e.Type != inbox.Enqueue {
			return
		}
		logged := false
		if live := f.rt.Sessions().Get(e.AgentID); live != nil {
			for _, ev := range live.Events() {
				logged = logged || ev.Type == "user/message"
			}
		}
		mu.Lock()
		seen = append(seen, enqueued{e.AgentID, e.MessageID, logged})
		mu.Unlock()
	})
	s, err := f.m.StartContinuable(ctx, f.spec(f.parent, "wait g"))
	require.NoError(t, err)
	require.Regexp(t, `^[0-9a-f-]{36}$`, s.ChildID)
	f.gates.open("g")
	f.settled(s.ChildID, 1)
	require.Equal(t, []enqueued{{s.ChildID, s.MessageID, false}}, underLock(&mu, func() []enqueued { return slices.Clone(seen) }))
	require.Equal(t, []string{"wait g"}, f.userTexts(s.ChildID))
}

// A failed preparation leaves nothing behind.
func TestStartRejectsWithoutIdsWhenPreparationFails(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t, withPrepare(func(context.Context, string, string, *parent.Handle) ([]sessionEvent, error) {
		return nil, fault.New(fault.UnsupportedCapability, `subagent provider "oneshot" does not support continuable children`, nil)
	}))
	_, err := f.m.StartContinuable(ctx, f.spec(f.parent, "hi"))
	require.ErrorIs(t, err, fault.UnsupportedCapability)
	require.ErrorContains(t, err, "does not support continuable children")
	require.Equal(t, 1, len(f.rt.Registry().List()))
}

// A start without session persistence is refused.
func TestStartRequiresPersistence(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t, memoryOnly())
	_, err := f.m.StartContinuable(ctx, f.spec(f.parent, "hi"))
	require.ErrorIs(t, err, fault.PersistenceUnavailable)
	require.ErrorContains(t, err, "require session persistence")
}

// The descriptor is seeded before the first turn, with no
// surfaceOp and only declared fields; the header names the parent.
func TestStartSeedsThePreTurnDescriptor(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	spec := f.spec(f.parent, "hi")
	spec.Request.AgentOptions = &AgentOptions{Provider: "mock", Model: "mock"}
	s, err := f.m.StartContinuable(ctx, spec)
	require.NoError(t, err)
	f.settled(s.ChildID, 1)
	events := f.events(s.ChildID)
	require.Equal(t, vocab.TypeSubagentDescriptor, events[0].Type)
	require.Nil(t, events[0].SurfaceOp)
	require.JSONEq(t, `{"version":1,"provider":"spawn","label":"child task","agentProvider":"mock","agentModel":"mock"}`, string(events[0].Data))
	require.Equal(t, "session/end-seed", events[1].Type)
	require.Equal(t, "turn/start", events[2].Type)
	require.Equal(t, "user/message", events[3].Type)
	h := f.header(s.ChildID)
	require.Equal(t, s.ChildID, h.ID)
	require.Equal(t, "parent", h.ParentSession)
	require.Equal(t, Origin, h.Origin)
	require.Equal(t, 1, h.DelegationDepth)
	require.Nil(t, h.SeedLength)

	// A child of a parent running the default agent records the route it
	// inherits, the default provider and model, so that the original can
	// resume it (its follow-up fails "has no provider/model" otherwise).
	require.Empty(t, f.parent.Spec().Provider, "the fixture's parent runs the default agent")
	inherited := f.start(f.parent, "hi")
	f.settled(inherited, 1)
	require.JSONEq(t, `{"version":1,"provider":"spawn","label":"child task","agentProvider":"scripted","agentModel":"scripted"}`,
		string(f.events(inherited)[0].Data))
}

// A context cancelled after publication, before acceptance.
func TestStartRollsBackWhenTheContextEndsBeforeAcceptance(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	f.rt.Registry().Subscribe(func(e parent.Event) {
		if e.Type == parent.EventCreated && e.AgentID != "parent" {
			cancel()
		}
	})
	_, err := f.m.StartContinuable(ctx, f.spec(f.parent, "hi"))
	require.ErrorIs(t, err, context.Canceled)
	f.inActor(func() {})
	require.Equal(t, []*parent.Handle{f.parent}, f.rt.Registry().List())
	edges, _, _ := f.rec.snapshot()
	require.Empty(t, edges)
}

// Cancelled inside subagent/start: the full disposal pairs the
// start with an end, and no child stays resident.
func TestStartRollsBackWhenTheContextEndsAfterPublication(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	f.rec.setOnStart(func(RunInfo) error { cancel(); return nil })
	_, err := f.m.StartContinuable(ctx, f.spec(f.parent, "hi"))
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, []*parent.Handle{f.parent}, f.rt.Registry().List())
	edges, _, ends := f.rec.snapshot()
	require.Len(t, edges, 2)
	require.Equal(t, agent.Completed, ends[0].StopReason)
}

// A failing start publication rolls back with no end edge.
func TestStartRollsBackWhenLifecyclePublicationFails(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	boom := errors.New("start publication failed")
	f.rec.setOnStart(func(RunInfo) error { return boom })
	_, err := f.m.StartContinuable(ctx, f.spec(f.parent, "hi"))
	require.ErrorIs(t, err, boom)
	require.Equal(t, 1, len(f.rt.Registry().List()))
	edges, _, _ := f.rec.snapshot()
	require.Empty(t, edges)
	require.NoError(t, f.m.Close(ctx))
}

// Depth checks before anything is created.
func TestStartChecksTheDepthCap(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	zero, negative := 0, -1
	spec := f.spec(f.parent, "hi")
	spec.Request.MaxDepth = &zero
	_, err := f.m.StartContinuable(ctx, spec)
	require.ErrorIs(t, err, fault.DepthExceeded)
	require.EqualError(t, err, "subagent depth 1 exceeds maxDepth 0")
	spec.Request.MaxDepth = &negative
	_, err = f.m.StartContinuable(ctx, spec)
	require.ErrorIs(t, err, errInvalidMaxDepth)
	require.ErrorIs(t, err, fault.InvalidRequest, "by code, as every refusal")
	require.Equal(t, 1, len(f.rt.Registry().List()))
}

// Composition is recorded and the child cold-resumes.
func TestStartRecordsCompositionInTheDescriptor(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	spec := f.spec(f.parent, "hi")
	spec.Request.ToolFilter = &event.ToolFilter{Deny: []string{"noop"}}
	spec.Request.Persona = "a careful reviewer"
	s, err := f.m.StartContinuable(ctx, spec)
	require.NoError(t, err)
	f.settled(s.ChildID, 1)
	var d descriptor.Data
	require.NoError(t, json.Unmarshal(f.events(s.ChildID)[0].Data, &d))
	require.Equal(t, []string{"noop"}, d.ToolFilter.Deny)
	require.Equal(t, "a careful reviewer", d.Persona)
	f.followup(f.parent, s.ChildID, "again")
	f.settled(s.ChildID, 2)
	require.Equal(t, []string{"hi", "again"}, f.userTexts(s.ChildID))
}

// Cold resume takes exactly the descriptor's route.
func TestColdResumeUsesOnlyTheDescriptorRoute(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	routeless := f.start(f.parent, "hi")
	spec := f.spec(f.parent, "hi")
	spec.Request.AgentOptions = &AgentOptions{Provider: "mock", Model: "child-model"}
	s, err := f.m.StartContinuable(ctx, spec)
	require.NoError(t, err)
	f.settled(routeless, 1)
	f.settled(s.ChildID, 1)
	f.followup(f.parent, routeless, "again")
	f.followup(f.parent, s.ChildID, "again")
	f.settled(routeless, 2)
	f.settled(s.ChildID, 2)
	resumed := f.options.last(routeless)
	require.True(t, resumed.Resumed)
	require.Equal(t, vocab.DefaultProvider, resumed.Provider, "the route the descriptor recorded from the parent")
	require.Equal(t, vocab.DefaultModel, resumed.Model)
	routed := f.options.last(s.ChildID)
	require.True(t, routed.Resumed)
	require.Equal(t, "child-model", routed.Model)
}

// Every epoch of a continuable child, created or cold-resumed, is owned by
// the exact parent that started or resumed it (parent.Spec.Owner).
func TestChildEpochsAreOwnedByTheirParent(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	var owners []*parent.Handle
	f.rt.Registry().Subscribe(func(e parent.Event) {
		if h := f.rt.Registry().Get(e.AgentID); e.Type == parent.EventCreated && h != nil && h.Header().ParentSession != "" {
			mu.Lock()
			owners = append(owners, h.Spec().Owner)
			mu.Unlock()
		}
	})
	child := f.start(f.parent, "hi")
	f.settled(child, 1)
	f.followup(f.parent, child, "again")
	f.settled(child, 2)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []*parent.Handle{f.parent, f.parent}, owners)
}

// A seeded (fork) child continues the inherited turn numbering.
func TestSeededChildContinuesTurnNumbering(t *testing.T) {
	bounded := testkit.Context(t)
	f := newFixture(t, withPrepare(func(ctx context.Context, provider, _ string, p *parent.Handle) ([]sessionEvent, error) {
		return completedPrefix(p), nil
	}))
	_, err := f.rt.Followup(bounded, "parent", event.Text("first"), event.Source{Kind: "user"})
	require.NoError(t, err)
	require.NoError(t, f.parent.Activation().WhenIdle(bounded))
	s, err := f.m.StartContinuable(bounded, f.spec(f.parent, "hi"))
	require.NoError(t, err)
	f.settled(s.ChildID, 1)
	h := f.header(s.ChildID)
	require.NotNil(t, h.SeedLength)
	require.Positive(t, *h.SeedLength)
	own := f.events(s.ChildID)[*h.SeedLength:]
	require.Equal(t, "session/end-seed", own[0].Type)
	require.Equal(t, vocab.TypeSubagentDescriptor, own[1].Type)
	var turns []int
	for _, e := range own {
		if e.Type == "turn/start" {
			var ts struct{ Turn int }
			require.NoError(t, json.Unmarshal(e.Data, &ts))
			turns = append(turns, ts.Turn)
		}
	}
	require.Equal(t, []int{2}, turns)
}

// A child inherits its parent's route (recorded in the
// descriptor), runs one level deeper, and gets its composition on create
// and on cold resume.
func TestChildInheritsTheParentRouteAndComposition(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	routed, err := f.rt.StartAgent(bg, parent.CreateSpec{Header: session.Header{ID: "routed"},
		Spec: parent.Spec{Provider: "mock", Model: "mock", MaxTokens: 512}})
	require.NoError(t, err)
	spec := f.spec(routed, "hi")
	spec.Request.Persona = "terse"
	s, err := f.m.StartContinuable(ctx, spec)
	require.NoError(t, err)
	f.settled(s.ChildID, 1)
	created := f.options.last(s.ChildID)
	require.Equal(t, agent.Options{SessionID: s.ChildID, ParentSession: "routed", Provider: "mock", Model: "mock",
		MaxTokens: 512, SubagentDepth: 1, Persona: "terse"}, created)
	require.JSONEq(t, `{"version":1,"provider":"spawn","label":"child task","agentProvider":"mock","agentModel":"mock","persona":"terse"}`,
		string(f.events(s.ChildID)[0].Data))
	f.followup(routed, s.ChildID, "again")
	f.settled(s.ChildID, 2)
	resumed := f.options.last(s.ChildID)
	require.Equal(t, agent.Options{SessionID: s.ChildID, ParentSession: "routed", Provider: "mock", Model: "mock",
		Persona: "terse", Resumed: true}, resumed, "no max tokens, no runtime depth on resume")
	require.Equal(t, 1, f.header(s.ChildID).DelegationDepth, "the header is the depth floor")
}

// A parent whose runtime depth is deeper than its header counts from there.
func TestRuntimeDepthDeepensTheChildDepth(t *testing.T) {
	ctx := testkit.Context(t)
	f := newFixture(t)
	deep, err := f.rt.StartAgent(bg, parent.CreateSpec{Header: session.Header{ID: "deep"}, Spec: parent.Spec{SubagentDepth: 3}})
	require.NoError(t, err)
	three := 3
	spec := f.spec(deep, "hi")
	spec.Request.MaxDepth = &three
	_, err = f.m.StartContinuable(ctx, spec)
	require.EqualError(t, err, "subagent depth 4 exceeds maxDepth 3")
}

// A step that panics (a bug: here a start request that bypassed the
// public method's nil-parent check) answers its caller with the failure
// instead of leaving it waiting, is logged, and the actor keeps serving.
func TestAPanickingStepAnswersItsCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { // a caller left waiting deadlocks the bubble
		f := newFixture(t)
		_, err := f.m.call(bg, startRequest{&op{kind: opStart, ctx: bg}})
		require.ErrorContains(t, err, "subagent: continuation manager failed")
		require.Contains(t, f.logs.String(), "continuation manager decision panicked")
		child := f.start(f.parent, "hello")
		f.settled(child, 1)
	})
}

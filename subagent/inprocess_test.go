package subagent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/vocab"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// world is a scripted runtime over a JSONL store, a Service with spawn and
// fork registered, and a top-level parent.
type world struct {
	t      *testing.T
	rt     *actors.Runtime
	s      *Service
	events *events
	parent *parent.Handle
}

func newWorld(t *testing.T) *world {
	t.Helper()
	rt, err := actors.New(actors.Options{Root: t.TempDir(), Workers: 2})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close(bg)) })
	s, err := New(rt, query.New(rt.Sessions()))
	require.NoError(t, err)
	w := &world{t: t, rt: rt, s: s, events: record(s)}
	for _, p := range []Provider{NewSpawn(rt), NewFork(rt)} {
		_, err := s.RegisterProvider(p)
		require.NoError(t, err)
	}
	w.parent, err = rt.StartAgent(bg, parent.CreateSpec{Header: session.Header{ID: "parent"}})
	require.NoError(t, err)
	return w
}

// turn runs one parent turn to its end.
func (w *world) turn(text string) {
	w.t.Helper()
	_, err := w.rt.Followup(bg, w.parent.ID(), event.Text(text), event.Source{Kind: "user"})
	require.NoError(w.t, err)
	require.NoError(w.t, w.parent.Activation().WhenIdle(bg))
}

// ended waits for the nth subagent/end of id.
func (w *world) ended(id string, n int) *EndEvent {
	w.t.Helper()
	for i := 1; ; i++ {
		seen := 0
		for _, ev := range w.events.waitFor(i) {
			if end, ok := ev.(*EndEvent); ok && end.ID == id {
				seen++
				if seen == n {
					return end
				}
			}
		}
	}
}

func (w *world) log(id string) []session.Event {
	w.t.Helper()
	if live := w.rt.Sessions().Get(id); live != nil {
		return live.Events()
	}
	log, err := w.rt.Sessions().Store().Inspect(bg, id)
	require.NoError(w.t, err)
	return log.Events
}

func lastReply(events []session.Event) string {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == "assistant/message" {
			var m struct {
				Message struct{ Content []event.Block }
			}
			if json.Unmarshal(events[i].Data, &m) == nil && len(m.Message.Content) > 0 {
				return m.Message.Content[0].Text
			}
		}
	}
	return ""
}

func TestSpawnRunsAOneShotChild(t *testing.T) {
	w := newWorld(t)
	run, err := w.s.Start(bg, SpawnName, StartRequest{Prompt: event.Text("reply hello"), Parent: w.parent})
	require.NoError(t, err)
	require.NotNil(t, run.localAgent)
	require.Equal(t, run.localAgent.ID(), run.id)
	require.Equal(t, "parent", run.localAgent.Header().ParentSession)
	require.Equal(t, 1, run.localAgent.Header().DelegationDepth)
	require.Same(t, w.parent, run.localAgent.Spec().Owner, "the run's child is its parent's")
	res, err := run.Result(bg)
	require.NoError(t, err)
	require.Equal(t, Result{Output: event.Text("hello"), StopReason: agent.Completed}, res)
	require.NoError(t, run.Dispose(bg))
	require.Nil(t, w.rt.Registry().Get(run.id))
	end := w.ended(run.id, 1)
	require.True(t, end.Local)
	require.Equal(t, SpawnName, end.Provider)
	require.Equal(t, "parent", end.ParentID)
}

func TestOneShotChildLevelFailureResolvesTheResult(t *testing.T) {
	w := newWorld(t)
	run, err := w.s.Start(bg, SpawnName, StartRequest{Prompt: event.Text("fail no luck"), Parent: w.parent})
	require.NoError(t, err)
	res, err := run.Result(bg)
	require.NoError(t, err)
	require.Equal(t, agent.Error, res.StopReason)
	require.NoError(t, run.Dispose(bg))
}

func TestOneShotContextEndingAfterPublicationCancelsTheRun(t *testing.T) {
	w := newWorld(t)
	ctx, cancel := context.WithCancel(bg)
	run, err := w.s.Start(ctx, SpawnName, StartRequest{Prompt: event.Text("sleep 1h"), Parent: w.parent})
	require.NoError(t, err)
	cancel()
	res, err := run.Result(bg)
	require.NoError(t, err)
	require.Equal(t, agent.Aborted, res.StopReason)
	require.NoError(t, run.Dispose(bg))
}

func TestForkSeedsTheCompletedTurnPrefix(t *testing.T) {
	w := newWorld(t)
	w.turn("reply first answer")
	run, err := w.s.Start(bg, ForkName, StartRequest{Prompt: event.Text("reply forked"), Parent: w.parent})
	require.NoError(t, err)
	_, err = run.Result(bg)
	require.NoError(t, err)
	h := run.localAgent.Header()
	require.NotNil(t, h.SeedLength)
	events := w.log(run.id)
	require.Equal(t, "first answer", lastReply(events[:*h.SeedLength]))
	require.Equal(t, vocab.TypeSessionEndSeed, events[*h.SeedLength].Type)
	require.Equal(t, "forked", lastReply(events))
	require.NoError(t, run.Dispose(bg))
	require.True(t, NewFork(w.rt).InheritsParentContext())
	require.False(t, NewSpawn(w.rt).InheritsParentContext())
}

// A fork child continues the parent's turn numbering through the fork
// provider.
func TestForkContinuableChildContinuesTurnNumbering(t *testing.T) {
	w := newWorld(t)
	w.turn("reply first answer")
	started, err := w.s.StartContinuable(bg, manager.StartSpec{Provider: ForkName, Label: "child task",
		Request: manager.Request{Prompt: event.Text("reply forked"), Parent: w.parent}})
	require.NoError(t, err)
	w.ended(started.ChildID, 1)
	log, err := w.rt.Sessions().Store().Inspect(bg, started.ChildID)
	require.NoError(t, err)
	seed := *log.Header.SeedLength
	require.Positive(t, seed)
	own := log.Events[seed:]
	require.Equal(t, vocab.TypeSessionEndSeed, own[0].Type)
	require.Equal(t, vocab.TypeSubagentDescriptor, own[1].Type)
	require.Equal(t, vocab.TypeSessionEndSeed, own[2].Type)
	for _, e := range own {
		if e.Type == "turn/start" {
			var start struct{ Turn int }
			require.NoError(t, json.Unmarshal(e.Data, &start))
			require.Equal(t, 2, start.Turn)
			break
		}
	}
}

type oneShotOnly struct{ stubProvider }

// A provider without PrepareContinuable is refused before
// anything is created.
func TestStartContinuableNeedsThePrepareCapability(t *testing.T) {
	w := newWorld(t)
	p := &oneShotOnly{stubProvider{name: "oneshot"}}
	_, err := w.s.RegisterProvider(p)
	require.NoError(t, err)
	_, err = w.s.StartContinuable(bg, manager.StartSpec{Provider: "oneshot", Label: "x",
		Request: manager.Request{Prompt: event.Text("hi"), Parent: w.parent}})
	require.ErrorIs(t, err, fault.UnsupportedCapability)
	require.EqualError(t, err, `subagent provider "oneshot" does not support continuable children (no prepareContinuable capability)`)
	require.Zero(t, p.count())
	require.Equal(t, 1, len(w.rt.Registry().List()))
	_, err = w.s.StartContinuable(bg, manager.StartSpec{Provider: "nobody", Label: "x",
		Request: manager.Request{Prompt: event.Text("hi"), Parent: w.parent}})
	require.ErrorIs(t, err, fault.NoProvider)
}

// The catalog lists a live child as running and a settled
// one as complete with its durable label, without an Activation.
func TestListChildrenThroughTheCatalog(t *testing.T) {
	w := newWorld(t)
	started, err := w.s.StartContinuable(bg, manager.StartSpec{Provider: SpawnName, Label: "summarize the doc",
		Request: manager.Request{Prompt: event.Text("sleep 1h"), Parent: w.parent}})
	require.NoError(t, err)
	entries, err := w.s.ListChildren(bg, "parent")
	require.NoError(t, err)
	require.Equal(t, []query.Entry{{Kind: query.KindChild, ID: started.ChildID, Label: "summarize the doc", Status: query.StatusRunning}}, entries)
	require.NoError(t, w.s.DrainContinuableDescendants(bg, []*parent.Handle{w.parent}))
	entries, err = w.s.ListChildren(bg, "parent")
	require.NoError(t, err)
	require.Equal(t, query.StatusComplete, entries[0].Status)
	require.Equal(t, started.ChildID+" [complete] — summarize the doc", query.RenderListAgents(entries))

	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err = w.s.ListChildren(ctx, "parent")
	require.ErrorIs(t, err, fault.Cancelled)
	_, err = w.s.ListChildren(bg, "nobody")
	require.ErrorIs(t, err, fault.QuerySessionNotFound)
}

// The scripted agent's spawn and send go through the capability bound to
// the calling agent.
func TestScriptedAgentsSpawnAndSendThroughTheCapability(t *testing.T) {
	w := newWorld(t)
	w.turn("spawn helper: reply hello")
	reply := lastReply(w.log("parent"))
	require.True(t, strings.HasPrefix(reply, "spawned helper "), reply)
	childID := strings.TrimPrefix(reply, "spawned helper ")
	w.ended(childID, 1)
	w.turn("send " + childID + ": reply again")
	require.True(t, strings.HasPrefix(lastReply(w.log("parent")), "sent "))
	w.ended(childID, 2)
	var sources []event.Source
	for _, e := range w.log(childID) {
		if e.Type == "user/message" {
			var m event.UserMessage
			require.NoError(t, json.Unmarshal(e.Data, &m))
			sources = append(sources, m.Source)
		}
	}
	require.Equal(t, []event.Source{{Kind: "user"}, {Kind: "coordinator", SenderSessionID: "parent"}}, sources)
	require.Equal(t, "again", lastReply(w.log(childID)))
}

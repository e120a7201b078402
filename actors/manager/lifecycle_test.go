package manager

import (
	"encoding/json"
	"testing"
	"testing/synctest"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/jsjson"
	"github.com/stretchr/testify/require"
)

// subagent/end is written as JSON.stringify writes it: nothing HTML-escaped
// (inside the blocks either), [] kept, a nil message left out.
func TestRunEndInfoIsWrittenAsJSONStringify(t *testing.T) {
	image := event.Block{Type: "image", Raw: json.RawMessage(`{"type":"image","alt":"<b>&"}`)}
	end := RunEndInfo{RunInfo: RunInfo{RunID: "r", Provider: "spawn", ID: "c", Local: true}, StopReason: agent.Completed,
		LastAssistantMessage: []event.Block{{Type: "text", Text: "<b>&\u2028"}, image}}
	data, err := jsjson.Marshal(end)
	require.NoError(t, err)
	require.Equal(t, `{"runId":"r","provider":"spawn","id":"c","local":true,"stopReason":"completed",`+
		"\"lastAssistantMessage\":[{\"type\":\"text\",\"text\":\"<b>&\u2028\"},{\"type\":\"image\",\"alt\":\"<b>&\"}]}", string(data))

	end.LastAssistantMessage = []event.Block{}
	data, err = jsjson.Marshal(end)
	require.NoError(t, err)
	require.Contains(t, string(data), `"lastAssistantMessage":[]`)
	end.LastAssistantMessage = nil
	data, err = jsjson.Marshal(end)
	require.NoError(t, err)
	require.NotContains(t, string(data), "lastAssistantMessage")
	require.NotContains(t, string(data), "discardedFollowups", "absent when nothing was discarded")
	end.DiscardedFollowups = 2
	data, err = jsjson.Marshal(end)
	require.NoError(t, err)
	require.Equal(t, `{"runId":"r","provider":"spawn","id":"c","local":true,"stopReason":"completed","discardedFollowups":2}`, string(data))
}

// A drain stops the forest through protoactor's hierarchy: the child's
// actor was spawned under its parent's, and the parent's stop ends only
// after the child's, whose release step waits for its cancelled turn. So
// a slow grandchild holds every end above it, and the ends come child
// first.
func TestADrainReleasesChildFirstBehindASlowGrandchild(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		f.openOnCleanup("c", "g")
		child := f.start(f.parent, "wait c")
		childAgent := f.rt.Registry().Get(child)
		grandchild := f.start(childAgent, "stuck g") // ignores the cancellation of its disposal
		sibling := f.start(childAgent, "wait s")
		f.gates.reached("g")
		f.gates.reached("s")

		drained := make(chan error, 1)
		go func() { drained <- f.drain(f.parent) }()
		synctest.Wait()
		require.Equal(t, []string{"start " + child, "start " + grandchild, "start " + sibling, "end " + sibling}, f.edges(),
			"only the grandchild that ended its turn was released")
		require.False(t, isClosed(childAgent.Activation().Done()), "the child's actor waits for its slow child's")
		require.True(t, f.live(child))
		require.Empty(t, drained)

		f.gates.open("g")
		require.NoError(t, <-drained)
		synctest.Wait()
		require.Equal(t, []string{"start " + child, "start " + grandchild, "start " + sibling, "end " + sibling,
			"end " + grandchild, "end " + child}, f.edges())
		require.Equal(t, agent.Aborted, f.settled(child, 1).StopReason)
		f.requireNoActivation()
	})
}

// A start under a child whose actor began stopping is refused with
// ACTIVATION_CLOSING, whether the manager saw the stop first or the
// child's actor refused the spawn; the stop still ends, child first.
func TestAStartUnderAStoppingChildIsRefusedAndTheStopEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		f.openOnCleanup("c", "g")
		child := f.start(f.parent, "wait c")
		childAgent := f.rt.Registry().Get(child)
		grandchild := f.start(childAgent, "stuck g")
		f.gates.reached("g")

		childAgent.Activation().Stop(agent.CancelCause{Kind: agent.CauseDisposed}) // behind the manager's back: a late spawn may race it
		_, err := f.m.StartContinuable(bg, f.spec(childAgent, "late"))
		require.ErrorIs(t, err, fault.ActivationClosing)
		synctest.Wait()
		require.Equal(t, []string{"start " + child, "start " + grandchild}, f.edges(), "no start for the refused child")

		f.gates.open("g")
		f.settled(child, 1)
		synctest.Wait()
		require.Equal(t, []string{"start " + child, "start " + grandchild, "end " + grandchild, "end " + child}, f.edges())
		f.requireNoActivation()
	})
}

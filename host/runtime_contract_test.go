package host

import (
	"bufio"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/stretchr/testify/require"
)

// startParentWithChild starts a top-level agent that spawns one
// continuable child, and waits until the child has settled (its
// Activation disposed, its session only in storage). It returns their ids.
func startParentWithChild(t *testing.T, s *runtimeStack) (string, string) {
	t.Helper()
	parentID := started(t, s.rt, "")
	converse(t, s.rt, parentID, "spawn worker: reply working")
	children := s.settled(t, parentID, 1)
	return parentID, children[0].ID
}

// activations counts the sessions that become live: agents created or
// resumed and subagent epochs.
type activations struct{ live atomic.Int64 }

func watchActivations(t *testing.T, s *runtimeStack) *activations {
	a := &activations{}
	t.Cleanup(s.rt.Subscribe(func(n dsh.Notice) {
		if n.Kind == dsh.SessionLive {
			a.live.Add(1)
		}
	}))
	return a
}

func TestReadingNeverActivatesChildOrParent(t *testing.T) {
	s := newRuntimeStack(t)
	p, child := startParentWithChild(t, s)
	require.NoError(t, s.rt.Release(context.Background(), p))
	watched := watchActivations(t, s)
	address := map[string]any{"parentSessionId": p, "childSessionId": child}

	list := callRPC(t, s.recorder, "subagent.list", map[string]any{"parentSessionId": p})
	require.JSONEq(t, `{"entries":[{"kind":"child","id":"`+child+`","label":"worker","activity":"inactive"}],
		"parentAvailable":false}`, string(list.Result.Value))
	history := callRPC(t, s.recorder, "subagent.history", address)
	require.True(t, history.Result.OK)
	require.Contains(t, string(history.Result.Value), "reply working")
	older := callRPC(t, s.recorder, "subagent.history", map[string]any{"parentSessionId": p, "childSessionId": child, "beforeSeq": 2})
	require.True(t, older.Result.OK)
	require.True(t, callRPC(t, s.recorder, "session.history", map[string]any{"sessionId": p}).Result.OK)
	require.True(t, callRPC(t, s.recorder, "session.list", map[string]any{}).Result.OK)

	require.Zero(t, watched.live.Load(), "no agent was created or resumed, no Activation started")
	require.False(t, isLive(s.rt, child))
	require.False(t, isLive(s.rt, p))
}

func TestPromptRequiresTheExactLiveParentAndNeverResumesIt(t *testing.T) {
	s := newRuntimeStack(t)
	p, child := startParentWithChild(t, s)
	require.NoError(t, s.rt.Release(context.Background(), p))
	watched := watchActivations(t, s)
	prompt := map[string]any{"parentSessionId": p, "childSessionId": child,
		"content": []any{map[string]any{"type": "text", "text": "reply again"}}}

	r := callRPC(t, s.recorder, "subagent.prompt", prompt)
	requireError(t, r, codeSubagentParentUnavailable, `parent session "`+p+`" is not live`,
		map[string]any{"parentSessionId": p})
	require.False(t, isLive(s.rt, p), "a missing parent is never resumed for a child prompt")
	require.Zero(t, watched.live.Load())

	// The ordinary route may bring the parent back; then its child accepts input.
	require.True(t, callRPC(t, s.recorder, "session.prompt", map[string]any{"sessionId": p, "mode": "queue",
		"content": []any{map[string]any{"type": "text", "text": "reply back"}}}).Result.OK)
	require.True(t, isLive(s.rt, p))
	r = callRPC(t, s.recorder, "subagent.prompt", prompt)
	require.True(t, r.Result.OK, "%+v", r.Result.Error)
	var accepted struct{ MessageID string }
	require.NoError(t, json.Unmarshal(r.Result.Value, &accepted))
	require.NotEmpty(t, accepted.MessageID)
}

func TestPromptToAChildOfAnotherParentIsNotFound(t *testing.T) {
	s := newRuntimeStack(t)
	_, child := startParentWithChild(t, s)
	stranger := started(t, s.rt, "")
	r := callRPC(t, s.recorder, "subagent.prompt", map[string]any{"parentSessionId": stranger, "childSessionId": child,
		"content": []any{map[string]any{"type": "text", "text": "reply mine"}}})
	requireError(t, r, codeSubagentNotFound, `session "`+child+`" is not a continuable direct child of "`+stranger+`"`,
		map[string]any{"parentSessionId": stranger, "childSessionId": child})
}

// TestColdResumeFramesStitchWithHistory reads a settled child's tail, then
// prompts it: the frames of the cold-resumed epoch come in lifecycle order,
// and the page's merge rule (drop seq <= tail, append tail+1, re-pull the
// tail page on a gap) ends with exactly the stored log. The gap it meets is
// the session/end-seed marker a resume appends before publication.
func TestColdResumeFramesStitchWithHistory(t *testing.T) {
	s := newRuntimeStack(t)
	p, child := startParentWithChild(t, s)
	stream, stop := openStream(t, s.url)
	defer stop()
	address := map[string]any{"parentSessionId": p, "childSessionId": child}
	pullTail := func() []int64 { return historySeqs(t, callRPC(t, s.recorder, "subagent.history", address)) }
	held := pullTail()
	stored := len(held)

	prompt := map[string]any{"parentSessionId": p, "childSessionId": child,
		"content": []any{map[string]any{"type": "text", "text": "reply resumed"}}}
	require.True(t, callRPC(t, s.recorder, "subagent.prompt", prompt).Result.OK)
	lifecycle, statuses, live := childFrames(t, stream, child)
	require.Equal(t, "added events removed", lifecycle)
	require.Equal(t, "running idle", statuses)

	repulls := 0
	for _, seq := range live {
		switch last := held[len(held)-1]; {
		case seq <= last:
		case seq == last+1:
			held = append(held, seq)
		default:
			repulls++
			held = mergeTail(held, pullTail())
		}
	}
	require.Equal(t, pullTail(), held, "no duplicate and no lost event")
	require.Equal(t, 1, repulls, "one re-pull, for the resume's end-seed marker")
	transcript, err := s.backend.ReadSession(context.Background(), child)
	require.NoError(t, err)
	require.Equal(t, "session/end-seed", transcript.Events[stored].Type)
}

// mergeTail keeps the held seqs before the tail page and then the page.
func mergeTail(held, page []int64) []int64 {
	kept := held[:0:0]
	for _, seq := range held {
		if seq < page[0] {
			kept = append(kept, seq)
		}
	}
	return append(kept, page...)
}

func historySeqs(t *testing.T, r response) []int64 {
	t.Helper()
	require.True(t, r.Result.OK, "%+v", r.Result.Error)
	var v struct {
		Events []struct {
			Event struct{ Seq int64 } `json:"event"`
		} `json:"events"`
	}
	require.NoError(t, json.Unmarshal(r.Result.Value, &v))
	seqs := make([]int64, len(v.Events))
	for i, e := range v.Events {
		seqs[i] = e.Event.Seq
	}
	return seqs
}

// childFrames reads frames until child's session is removed and its agent
// idle, returning its
// session lifecycle ("added events removed", repeated kinds folded), its
// status edges ("running idle"; the agent bus orders them on their own, not
// against the session's frames) and the seqs of its session/event frames.
func childFrames(t *testing.T, stream *bufio.Reader, child string) (string, string, []int64) {
	t.Helper()
	var lifecycle, statuses []string
	var seqs []int64
	note := func(kind string) {
		if len(lifecycle) == 0 || lifecycle[len(lifecycle)-1] != kind {
			lifecycle = append(lifecycle, kind)
		}
	}
	for !(slices.Contains(lifecycle, "removed") && slices.Contains(statuses, "idle")) {
		f := readFrame(t, stream)
		var payload struct {
			SessionID string `json:"sessionId"`
			Running   bool   `json:"running"`
			Event     struct{ Seq int64 }
		}
		require.NoError(t, json.Unmarshal(f.Payload, &payload))
		if payload.SessionID != child {
			continue
		}
		switch f.Method {
		case frameSessionAdded:
			note("added")
		case frameSessionStatus:
			statuses = append(statuses, map[bool]string{true: "running", false: "idle"}[payload.Running])
		case frameSessionEvent:
			note("events")
			seqs = append(seqs, payload.Event.Seq)
		case frameSessionRemoved:
			note("removed")
		}
	}
	return strings.Join(lifecycle, " "), strings.Join(statuses, " "), seqs
}

// TestAPromptWhoseParentLeftMeanwhileFindsItNotLive: a parent found live
// that leaves the process before the follow-up is delivered (disposed; on
// Postgres, its lease taken over) is no live parent: the child still
// belongs to it, so subagent-parent-unavailable, never unauthorized.
func TestAPromptWhoseParentLeftMeanwhileFindsItNotLive(t *testing.T) {
	s := newRuntimeStack(t)
	p, child := startParentWithChild(t, s)
	found, live := s.backend.LiveAgent(p)
	require.True(t, live)
	require.NoError(t, s.rt.Release(context.Background(), p))
	_, err := s.backend.Followup(context.Background(), found, child, event.Text("reply late"), userSource)
	require.ErrorIs(t, err, codeSubagentParentUnavailable)
	require.NotErrorIs(t, err, codeSubagentUnauthorized)
}

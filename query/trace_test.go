package query

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/catalog"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/session"
)

func ids(nodes []lineageNode) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Session.Header.ID
	}
	return out
}

func recordIDs(recs []catalog.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Header.ID
	}
	return out
}

func TestTraceUsesOneListingAndNoInspect(t *testing.T) {
	w := newWorld(t)
	w.persist(header("parent", "", 1), nil)
	w.authorChild("child", "parent", 2, "c")

	trace, err := w.q.traceSession(context.Background(), "parent")
	require.NoError(t, err)
	lists, inspects := w.store.counts()
	require.Equal(t, 1, lists)
	require.Equal(t, 0, inspects)
	require.Equal(t, catalog.Record{Header: header("parent", "", 1), Persisted: true}, trace.Target)
	require.Equal(t, []string{"child"}, ids(trace.Descendants))
}

func TestTraceReturnsAncestryAndOrderedDescendantTrees(t *testing.T) {
	w := newWorld(t)
	w.persist(header("root", "", 1), nil)
	w.persist(header("parent", "root", 2), nil)
	w.persist(header("target", "parent", 3), nil)
	w.persist(header("b", "target", 4), nil)
	w.persist(header("a", "target", 4), nil)
	w.persist(header("older", "target", 3), nil)
	w.persist(header("grandchild", "a", 5), nil)

	trace, err := w.q.traceSession(context.Background(), "target")
	require.NoError(t, err)
	require.Equal(t, []string{"parent", "root"}, recordIDs(trace.Ancestors))
	require.True(t, trace.Complete)
	require.Equal(t, "root", trace.Root.Header.ID)
	require.Equal(t, []string{"older", "a", "b"}, ids(trace.Descendants))
	require.Equal(t, []string{"grandchild"}, ids(trace.Descendants[1].Descendants))
	require.Empty(t, trace.Descendants[0].Descendants)
}

func TestTraceRepresentsRootAndUnresolvedParent(t *testing.T) {
	w := newWorld(t)
	w.persist(header("root", "", 1), nil)
	w.persist(header("orphan", "outside", 1), nil)

	root, err := w.q.traceSession(context.Background(), "root")
	require.NoError(t, err)
	require.True(t, root.Complete)
	require.Equal(t, "root", root.Root.Header.ID)
	require.Empty(t, root.Ancestors)

	orphan, err := w.q.traceSession(context.Background(), "orphan")
	require.NoError(t, err)
	require.False(t, orphan.Complete)
	require.Nil(t, orphan.Root)
	require.Equal(t, "outside", orphan.UnresolvedParentID)
}

func TestTraceRejectsCyclesAndMissingTargets(t *testing.T) {
	w := newWorld(t)
	w.persist(header("x", "y", 1), nil)
	w.persist(header("y", "x", 1), nil)

	_, err := w.q.traceSession(context.Background(), "x")
	require.ErrorIs(t, err, fault.QueryInvalidLineage)
	require.EqualError(t, err, `session lineage contains a cycle at "x"`)

	_, err = w.q.traceSession(context.Background(), "nobody")
	require.ErrorIs(t, err, fault.QuerySessionNotFound)
	require.EqualError(t, err, `session "nobody" not found`)
}

func TestTraceBuildsDeepLineagesWithoutRecursion(t *testing.T) {
	live := memoryOnly(t)
	const depth = 3000
	goLive(t, live, header("n0", "", 1), nil)
	for i := 1; i <= depth; i++ {
		goLive(t, live, header(fmt.Sprintf("n%d", i), fmt.Sprintf("n%d", i-1), int64(i)), nil)
	}
	q := New(live)
	trace, err := q.traceSession(context.Background(), "n0")
	require.NoError(t, err)
	levels := 0
	for nodes := trace.Descendants; len(nodes) > 0; nodes = nodes[0].Descendants {
		levels++
	}
	require.Equal(t, depth, levels)
}

func TestTraceFailsWholeOnPersistenceListingFailure(t *testing.T) {
	w := newWorld(t)
	boom := errors.New("disk on fire")
	w.store.listErr = boom
	_, err := w.q.traceSession(context.Background(), "parent")
	require.ErrorIs(t, err, fault.QueryPersistenceFailed)
	require.ErrorIs(t, err, boom)
	require.EqualError(t, err, "session persistence listing failed: disk on fire")
}

func TestTraceMergesLiveFirstAndDetectsConflicts(t *testing.T) {
	w := newWorld(t)
	w.persist(header("shared", "", 1), nil)
	w.persist(header("durable", "shared", 2), nil)
	_, err := w.sessions.Resume(context.Background(), "shared")
	require.NoError(t, err)
	w.goLive(header("fresh", "shared", 3), nil)

	trace, err := w.q.traceSession(context.Background(), "shared")
	require.NoError(t, err)
	require.Equal(t, catalog.Record{Header: header("shared", "", 1), Live: true, Persisted: true}, trace.Target)
	require.Equal(t, []catalog.Record{
		{Header: header("durable", "shared", 2), Persisted: true},
		{Header: header("fresh", "shared", 3), Live: true, Persisted: true},
	}, []catalog.Record{trace.Descendants[0].Session, trace.Descendants[1].Session})

	conflicts := map[string]func(h *session.Header){
		"cwd":             func(h *session.Header) { h.Cwd = "/elsewhere" },
		"delegationDepth": func(h *session.Header) { h.DelegationDepth = 1 },
		"seedLength":      func(h *session.Header) { h.SeedLength = intPtr(0) },
	}
	for name, change := range conflicts {
		t.Run(name, func(t *testing.T) {
			h := header("durable", "shared", 2)
			change(&h)
			foreign := memoryOnly(t)
			goLive(t, foreign, h, nil)
			_, err := w.foreignQuery(foreign).traceSession(context.Background(), "fresh")
			require.ErrorIs(t, err, fault.QuerySourceConflict)
			require.EqualError(t, err, `session source headers conflict for session "durable"`)
		})
	}
}

func TestTraceIgnoresOriginAndAgentPresetInConflicts(t *testing.T) {
	w := newWorld(t)
	w.persist(header("s", "", 1), nil)
	h := header("s", "", 1)
	h.Origin, h.AgentPreset = "subagent", "preset"
	foreign := memoryOnly(t)
	goLive(t, foreign, h, nil)
	trace, err := w.foreignQuery(foreign).traceSession(context.Background(), "s")
	require.NoError(t, err)
	require.Equal(t, "preset", trace.Target.Header.AgentPreset, "the live header wins")
}

func TestTraceReturnsDetachedRecords(t *testing.T) {
	live := memoryOnly(t)
	goLive(t, live, session.Header{ID: "s", CreatedAt: 1, SeedLength: intPtr(2)}, nil)
	q := New(live)
	trace, err := q.traceSession(context.Background(), "s")
	require.NoError(t, err)
	*trace.Target.Header.SeedLength = 99
	again, err := q.traceSession(context.Background(), "s")
	require.NoError(t, err)
	require.Equal(t, 2, *again.Target.Header.SeedLength)
}

func TestTracePreservesTheExactCancellationCause(t *testing.T) {
	w := newWorld(t)
	cause := errors.New("caller gave up")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	_, err := w.q.traceSession(ctx, "parent")
	require.Same(t, cause, err)
	lists, _ := w.store.counts()
	require.Zero(t, lists, "persistence is never entered after a pre-abort")
}

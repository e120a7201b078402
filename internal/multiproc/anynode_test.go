package multiproc

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// promptThroughAnyNode: node c holds nothing; a subagent.prompt sent to
// it for a child whose parent is live on node a is committed to the
// child's durable inbox (the store checks the parent's live epoch) and
// answered with its message id; the child runs it wherever it is woken,
// and it is logged exactly once.
func promptThroughAnyNode(t *testing.T, w *world) {
	a, c := w.start("a"), w.start("c")
	parent, children, err := a.CreateParent(w.ctx, 2)
	require.NoError(t, err)
	first, err := c.Followup(w.ctx, parent, children[0], "reply through a node that holds nothing")
	require.NoError(t, err, "a node that holds nothing accepts a follow-up for a parent live elsewhere")
	w.awaitLogged(children[0], first)
	resident, err := a.Followup(w.ctx, parent, children[1], "sleep 200ms\nreply resident")
	require.NoError(t, err)
	second, err := c.Followup(w.ctx, parent, children[1], "reply behind the resident turn")
	require.NoError(t, err)
	w.awaitLogged(children[1], second)

	_, err = c.Followup(w.ctx, "no-such-parent", children[0], "reply nowhere")
	requireRefused(t, err, "subagent-parent-unavailable")
	w.stop(a)
	w.stop(c)
	acked := []Acked{{Node: "c", Child: children[0], MessageID: first}, {Node: "a", Child: children[1], MessageID: resident},
		{Node: "c", Child: children[1], MessageID: second}}
	r, err := Check(w.ctx, w.dsn, acked)
	require.NoError(t, err)
	require.Empty(t, r.Violations)
}

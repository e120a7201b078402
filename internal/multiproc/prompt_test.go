package multiproc

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// promptSessionThroughAnyNode: node c holds nothing. session.prompts for
// a top-level session live on node a, sent through a and c in turn, are
// each acknowledged (c commits them to the session's durable inbox,
// which wakes a) and run once by a, in the order they were acknowledged.
// Then a is killed (kill -9) with an acknowledged prompt queued behind a
// long turn: once its lease expired, c's sweep takes the session over and
// c runs that prompt, once.
func promptSessionThroughAnyNode(t *testing.T, w *world) {
	a, c := w.start("a"), w.start("c")
	parent, _, err := a.CreateParent(w.ctx, 1)
	require.NoError(t, err)
	prompt := func(n *Node, s string) {
		t.Helper()
		require.NoError(t, n.Call(w.ctx, "session.prompt", map[string]any{"sessionId": parent, "mode": "queue", "content": text(s)}, nil),
			"%q through node %s", s, n.Name)
	}
	sent := []string{"sleep 300ms\nreply first", "reply second", "reply third", "reply fourth"}
	for i, s := range sent {
		prompt([]*Node{a, c}[i%2], s)
	}
	awaitText(t, w, parent, "reply fourth")
	texts := userTexts(t, w, parent)
	require.Equal(t, sent, texts[len(texts)-len(sent):], "each prompt once, in the order they were acknowledged")
	for _, s := range sent {
		ran, err := ranBy(w.ctx, w.dsn, parent, s)
		require.NoError(t, err)
		require.Equal(t, "a", ran, "%q ran on the node that holds the session", s)
	}

	prompt(c, "sleep 10m")
	awaitText(t, w, parent, "sleep 10m")
	prompt(c, "reply after the kill")
	a.Kill()
	awaitText(t, w, parent, "reply after the kill")
	require.Equal(t, 1, countText(userTexts(t, w, parent), "reply after the kill"), "the acknowledged prompt ran once")
	ran, err := ranBy(w.ctx, w.dsn, parent, "reply after the kill")
	require.NoError(t, err)
	require.Equal(t, "c", ran, "the survivor ran it")
	w.stop(c)
	r, err := Check(w.ctx, w.dsn, nil)
	require.NoError(t, err)
	require.Empty(t, r.Violations)
}

package host

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors"
	"github.com/stretchr/testify/require"
)

// TestDurableAdmissionCoversSessionPrompt: on a store in the durable
// admission mode a session.prompt is acknowledged only once it is in the
// session's durable inbox, so one the process never ran (it stopped while
// a long turn ran) runs when the session is next resumed, before the
// prompt that resumed it.
func TestDurableAdmissionCoversSessionPrompt(t *testing.T) {
	root := t.TempDir()
	open := func() (*dsh.Runtime, *Handler) {
		opened, err := dsh.Open(dsh.Options{Dir: root, DurableAdmission: true})
		require.NoError(t, err)
		b := newRuntimeBackend(opened)
		h := newHandler(b, Options{Cwd: t.TempDir()})
		t.Cleanup(func() { require.NoError(t, opened.Close()) })
		return opened, h
	}
	prompt := func(h *Handler, text string) {
		r := callRPC(t, h, "session.prompt", map[string]any{"sessionId": "top-1", "mode": "queue",
			"content": []map[string]any{{"type": "text", "text": text}}})
		require.True(t, r.Result.OK, "%s: %+v", text, r.Result.Error)
	}
	rt, h := open()
	require.True(t, callRPC(t, h, "session.create", map[string]any{"sessionId": "top-1", "cwd": h.opts.Cwd}).Result.OK)
	prompt(h, "sleep 10m")
	// Only a message its turn logged is claimed: stopped before that, the
	// long turn's own prompt would be pending too, and run (for ten
	// minutes) first after the resume.
	require.Eventually(t, func() bool { return logged(rt, "top-1", "sleep 10m") }, time.Minute, time.Millisecond,
		`waiting for the turn on "sleep 10m" to log its message`)
	prompt(h, "reply acknowledged, never run here")
	h.Close()
	require.NoError(t, rt.Close()) // the long turn is cancelled, the queued prompt discarded unrun

	rt, h = open()
	t.Cleanup(func() { h.Close(); require.NoError(t, rt.Close()) })
	prompt(h, "reply the next one")
	waitIdle(t, rt, "top-1", "reply the next one")
	var texts []string
	for _, e := range history(t, rt, "top-1") {
		if e.Type == "user/message" {
			texts = append(texts, string(e.Data))
		}
	}
	all := strings.Join(texts, "\n")
	first, next := strings.Index(all, "never run here"), strings.Index(all, "reply the next one")
	require.NotEqual(t, -1, first, "the acknowledged prompt ran after the resume: %s", all)
	require.Less(t, first, next, "in admission order")
	require.Equal(t, 1, strings.Count(all, "never run here"), "once")
}

// logged reports whether session id's log holds a user message with text.
func logged(rt *dsh.Runtime, id, text string) bool {
	h, err := rt.History(context.Background(), id)
	if err != nil {
		return false
	}
	for _, e := range h.Events {
		if e.Type == "user/message" && strings.Contains(string(e.Data), text) {
			return true
		}
	}
	return false
}

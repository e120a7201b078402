package multiproc

import (
	"context"
	"errors"
	"net/http/httptrace"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// promptToPausedNode: node a holds a parent with a child and is paused
// (SIGSTOP) past its lease TTL; node b takes the parent over. A
// session.prompt to the parent and a subagent.prompt to its child, sent to
// a while it is paused and answered once it continues, are each either
// refused with a busy error (agent-busy; subagent-not-delivered or
// subagent-parent-unavailable: never subagent-unauthorized, the child
// does belong to that parent) or acknowledged and then logged.
func promptToPausedNode(t *testing.T, w *world) {
	a, b := w.start("a"), w.start("b")
	parent, children, err := a.CreateParent(w.ctx, 1)
	require.NoError(t, err)
	require.NoError(t, a.Pause())
	_, err = b.TakeOver(w.ctx, parent, ttl/10)
	require.NoError(t, err)

	topWritten, subWritten := make(chan struct{}), make(chan struct{})
	top, sub := make(chan error, 1), make(chan error, 1)
	var subID string
	go func() {
		top <- a.Call(written(w.ctx, topWritten), "session.prompt",
			map[string]any{"sessionId": parent, "mode": "queue", "content": text("reply GHOST-top")}, nil)
	}()
	go func() {
		var err error
		subID, err = a.Followup(written(w.ctx, subWritten), parent, children[0], "reply GHOST-child")
		sub <- err
	}()
	for _, wrote := range []chan struct{}{topWritten, subWritten} {
		select {
		case <-wrote:
		case <-w.ctx.Done():
			t.Fatal("the prompts to the paused node were never written to its socket")
		}
	}
	require.NoError(t, a.Resume())

	if err := <-top; err != nil {
		requireRefused(t, err, "agent-busy")
	} else {
		awaitText(t, w, parent, "GHOST-top")
	}
	var acked []Acked
	if err := <-sub; err != nil {
		requireRefused(t, err, "subagent-not-delivered", "subagent-parent-unavailable")
	} else {
		acked = append(acked, Acked{Node: "a", Child: children[0], MessageID: subID})
		w.awaitLogged(children[0], subID)
	}
	w.stop(a)
	w.stop(b)
	r, err := Check(w.ctx, w.dsn, acked)
	require.NoError(t, err)
	require.Empty(t, r.Violations)
}

// written is ctx with a trace that closes wrote once the request is
// written to the connection.
func written(ctx context.Context, wrote chan struct{}) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { close(wrote) }})
}

// requireRefused requires err to be an RPC refusal with one of codes.
func requireRefused(t *testing.T, err error, codes ...string) {
	t.Helper()
	var refused *RPCError
	require.True(t, errors.As(err, &refused), "not a refusal: %v", err)
	require.Contains(t, codes, refused.Code, "%s: %s", refused.Method, refused.Message)
}

// awaitText waits (bounded) until a user message of session id holds s.
func awaitText(t *testing.T, w *world, id, s string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(w.ctx, bound)
	defer cancel()
	for {
		var n int
		require.NoError(t, withConn(ctx, w.dsn, func(conn *pgx.Conn) error {
			return conn.QueryRow(ctx, `SELECT count(*) FROM events WHERE session_id = $1 AND type = 'user/message' AND strpos(line, $2) > 0`,
				id, s).Scan(&n)
		}))
		if n > 0 {
			return
		}
		require.NoError(t, pause(ctx, ttl/10), "%q acknowledged by the paused node never reached the log of %s", s, id)
	}
}

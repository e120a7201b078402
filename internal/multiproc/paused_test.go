package multiproc

import (
	"context"
	"errors"
	"net/http/httptrace"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// promptToPausedNode: node a holds a parent with a child and is paused
// (SIGSTOP) past its lease TTL; node b takes the parent over. A
// session.prompt to the parent, sent to a while it is paused and answered
// once it continues, is acknowledged (a commits it to the parent's
// durable inbox, which wakes b) and logged exactly once, by b. A
// subagent.prompt to its child sent alike is either refused with a busy
// error (subagent-not-delivered or subagent-parent-unavailable: never
// subagent-unauthorized, the child does belong to that parent) or
// acknowledged and then logged.
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

	require.NoError(t, <-top, "a paused node's lease is lost, yet it accepts the prompt for the node that holds the session")
	awaitText(t, w, parent, "GHOST-top")
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
	require.Equal(t, 1, countText(userTexts(t, w, parent), "GHOST-top"), "the prompt ran once")
	ran, err := ranBy(w.ctx, w.dsn, parent, "GHOST-top")
	require.NoError(t, err)
	require.Equal(t, "b", ran, "the holder ran it, not the paused node")
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

// userTexts are the texts of session id's user messages, in log order.
func userTexts(t *testing.T, w *world, id string) []string {
	t.Helper()
	var texts []string
	require.NoError(t, withConn(w.ctx, w.dsn, func(conn *pgx.Conn) error {
		rows, err := conn.Query(w.ctx, `SELECT line::jsonb #>> '{data,content,0,text}' FROM events
			WHERE session_id = $1 AND type = 'user/message' ORDER BY seq`, id)
		if err != nil {
			return err
		}
		texts, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	return texts
}

// countText counts the texts that contain s.
func countText(texts []string, s string) int {
	n := 0
	for _, t := range texts {
		if strings.Contains(t, s) {
			n++
		}
	}
	return n
}

// ranBy is the owner (the node name) of the epoch under which the user
// message of session id holding s was logged, from the lease history.
func ranBy(ctx context.Context, dsn, id, s string) (string, error) {
	var owner string
	err := withConn(ctx, dsn, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, `SELECT h.owner FROM events e JOIN lease_history h ON h.session_id = e.session_id AND h.epoch = e.epoch
			WHERE e.session_id = $1 AND e.type = 'user/message' AND strpos(e.line::jsonb #>> '{data,content,0,text}', $2) > 0`, id, s).Scan(&owner)
	})
	return owner, err
}

// awaitText waits (bounded) until a user message of session id holds s.
func awaitText(t *testing.T, w *world, id, s string) {
	t.Helper()
	awaitEventHolding(t, w, id, "user/message", s, "the message acknowledged by the paused node")
}

// awaitEventHolding waits (bounded) until an event of type typ in session
// id's log holds s; what names the awaited event in the failure.
func awaitEventHolding(t *testing.T, w *world, id, typ, s, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(w.ctx, bound)
	defer cancel()
	for {
		var n int
		require.NoError(t, withConn(ctx, w.dsn, func(conn *pgx.Conn) error {
			return conn.QueryRow(ctx, `SELECT count(*) FROM events WHERE session_id = $1 AND type = $2 AND strpos(line, $3) > 0`,
				id, typ, s).Scan(&n)
		}))
		if n > 0 {
			return
		}
		require.NoError(t, pause(ctx, ttl/10), "%s holding %q never reached the log of %s", what, s, id)
	}
}

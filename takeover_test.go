package dsh

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// takeoverTTL is the lease TTL of the embedders in the takeover test.
const takeoverTTL = time.Second

// storeWait bounds every wait on the store in the takeover test.
const storeWait = time.Minute

// Two embedding processes on one Postgres store: a child resident in
// process A (waiting: it owns a sleeping grandchild) whose parent is live
// in process B. A is killed -9. Two messages B's Send acknowledges for
// the child while A's lease still looks live run in B once each, in
// order, with no later Send: B's sweep takes the dead process's sessions
// over and its manager runs what was pending.
func TestEmbeddedTakeoverAfterKill(t *testing.T) {
	dsn := cluster.Database(t)
	parentID, childID, holder := childResidentElsewhere(t, dsn)
	sender := startEmbedder(t, dsn, "b", takeoverTTL)
	awaitResumed(t, sender, parentID)

	holder.kill()
	killed := time.Now()
	first := sender.must(t, "send", parentID, childID, "reply first")
	second := sender.must(t, "send", parentID, childID, "reply second")
	awaitStore(t, dsn, "the child's second message to be logged", func(conn *pgx.Conn) (bool, error) {
		n, err := messageCount(conn, childID, second)
		return n > 0, err
	})
	took := time.Since(killed)
	t.Logf("takeover after kill -9: %v with a lease TTL of %v (%.1f TTLs)", took, takeoverTTL, took.Seconds()/takeoverTTL.Seconds())

	got := replies(t, dsn, childID)
	require.Equal(t, []string{first, second}, got.ids[len(got.ids)-2:], "each acknowledged message runs once, in order")
	require.Equal(t, []string{"first", "second"}, got.texts[len(got.texts)-2:])
}

// childResidentElsewhere makes, on the store dsn, a parent whose child is
// resident in process A ("a"), waiting on a sleeping grandchild, with the
// parent live nowhere: process X starts both, runs a long turn in the
// child with a follow-up (spawn the grandchild) pending behind it, and is
// killed; A's sweep takes the child over and runs the follow-up. It
// returns the ids and A.
func childResidentElsewhere(t *testing.T, dsn string) (parentID, childID string, holder *embedder) {
	doomed := startEmbedder(t, dsn, "x", takeoverTTL)
	holder = startEmbedder(t, dsn, "a", takeoverTTL)
	parentID = "parent"
	doomed.must(t, "start", parentID)
	childID = doomed.must(t, "spawn", parentID, "worker", "sleep 10m")
	awaitStore(t, dsn, "the child's long turn to start in process x", func(conn *pgx.Conn) (bool, error) {
		var started bool
		err := conn.QueryRow(context.Background(), `SELECT count(*) > 0 FROM events WHERE session_id = $1
			AND type = 'user/message'`, childID).Scan(&started)
		return started, err
	})
	pending := doomed.must(t, "send", parentID, childID, "spawn grandchild: sleep 10m")
	doomed.kill()
	awaitStore(t, dsn, "process a to run the follow-up process x left pending", func(conn *pgx.Conn) (bool, error) {
		n, err := messageCount(conn, childID, pending)
		return n > 0, err
	})
	awaitStore(t, dsn, "process a to hold the child", func(conn *pgx.Conn) (bool, error) {
		var holder *string
		err := conn.QueryRow(context.Background(), `SELECT owner FROM sessions WHERE id = $1`, childID).Scan(&holder)
		return holder != nil && *holder == "a", err
	})
	return parentID, childID, holder
}

// awaitResumed resumes the top-level agent id in e, retrying while
// another process's lease on it is live.
func awaitResumed(t *testing.T, e *embedder, id string) {
	deadline := time.Now().Add(storeWait)
	for {
		_, err := e.call(t, "resume", id)
		if err == nil {
			return
		}
		require.ErrorIs(t, err, fault.AgentStartFailed)
		require.Less(t, time.Now(), deadline, "embedder %s never resumed %s: %v", e.name, id, err)
		time.Sleep(takeoverTTL / 10)
	}
}

// awaitStore polls ready on a connection to dsn until it reports true,
// failing the test, naming what, after storeWait.
func awaitStore(t *testing.T, dsn, what string, ready func(*pgx.Conn) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	for {
		ok, err := ready(conn)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			require.NoError(t, err, "waiting for %s", what)
		}
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waited %s for %s", storeWait, what)
		case <-time.After(takeoverTTL / 20):
		}
	}
}

// messageCount is how many user/message events of session id carry the
// message id msgID.
func messageCount(conn *pgx.Conn, id, msgID string) (int, error) {
	var n int
	err := conn.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE session_id = $1
		AND type = 'user/message' AND line::jsonb -> 'data' ->> 'id' = $2`, id, msgID).Scan(&n)
	return n, err
}

// turnLog is a session's user message ids and assistant texts, in log
// order.
type turnLog struct{ ids, texts []string }

// replies reads session id's user message ids and assistant texts.
func replies(t *testing.T, dsn, id string) turnLog {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT type, coalesce(line::jsonb -> 'data' ->> 'id', ''),
		coalesce(line::jsonb -> 'data' -> 'message' -> 'content' -> 0 ->> 'text', '')
		FROM events WHERE session_id = $1 AND type IN ('user/message', 'assistant/message') ORDER BY seq`, id)
	require.NoError(t, err)
	var log turnLog
	for rows.Next() {
		var kind, msgID, text string
		require.NoError(t, rows.Scan(&kind, &msgID, &text))
		if kind == "user/message" {
			log.ids = append(log.ids, msgID)
		} else {
			log.texts = append(log.texts, text)
		}
	}
	require.NoError(t, rows.Err())
	return log
}

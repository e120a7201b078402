package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/dsh-actors/dsh-actors/session"
	"github.com/jackc/pgx/v5"
)

// wakeChannel is the NOTIFY channel of the wakes of sessions with a
// parent (the continuable children): every listener hears every wake,
// and the payload is the session id. One channel (not one per session)
// lets a process hear wakes for sessions it has never seen, which is
// what a takeover needs.
const wakeChannel = "dsh_actors_wake"

// topLevelWakeChannel is wakeChannel's twin for the top-level sessions,
// whose prompts the host of their agents runs, not the children's
// manager.
const topLevelWakeChannel = "dsh_actors_wake_top"

// wakeChannelOfR is the SQL expression naming the wake channel of the
// session of a CTE r row (by its parent_id).
const wakeChannelOfR = `CASE WHEN r.parent_id IS NULL THEN '` + topLevelWakeChannel + `' ELSE '` + wakeChannel + `' END`

// releasedChannel is the channel a release of a session that a drain
// marked notifies (its id as the payload), at the commit: what a drain
// waiting for the sessions below its parent listens for.
const releasedChannel = "dsh_actors_released"

// notifyReleased is the tail (after notifyPending) of a release whose CTE
// r returns each released session's id and drain_id.
const notifyReleased = ` UNION ALL SELECT pg_notify('` + releasedChannel + `', r.id) FROM r WHERE r.drain_id IS NOT NULL`

// notifyPending is the tail of a statement whose CTE r returns session
// ids and parent_ids: it wakes those of them that have pending messages,
// at the commit.
const notifyPending = `SELECT pg_notify(` + wakeChannelOfR + `, r.id) FROM r
	WHERE EXISTS (SELECT 1 FROM inbox i WHERE i.session_id = r.id AND i.claimed_seq IS NULL)`

// notDrainedS is the condition that no drain cut-off in force closes
// admission to the session s (the cut-off holds while the drain's parent
// holds the lease of the epoch it drained at).
const notDrainedS = `(s.drain_id IS NULL OR NOT EXISTS (SELECT 1 FROM sessions d
		WHERE d.id = s.drain_parent AND d.epoch = s.drain_epoch AND d.owner IS NOT NULL))`

// orphansSQL wakes every active session with pending messages whose lease
// no one holds live (released, or expired: its holder died or stalls),
// less those under a drain cut-off in force: the drain settles their
// pending messages, no turn runs them.
const orphansSQL = `WITH r AS (SELECT s.id, s.parent_id FROM sessions s
		WHERE s.id IN (SELECT session_id FROM inbox WHERE claimed_seq IS NULL)
		AND s.state = 'active' AND (s.owner IS NULL OR s.lease_until < now())
		AND ` + notDrainedS + `)
	SELECT r.id, pg_notify(` + wakeChannelOfR + `, r.id)::text FROM r`

// orphanSQL: is $1 an active session with pending messages, no live
// lease and no drain cut-off in force (orphansSQL's condition, for one
// session)?
const orphanSQL = `SELECT EXISTS (SELECT 1 FROM sessions s WHERE s.id = $1
	AND s.state = 'active' AND (s.owner IS NULL OR s.lease_until < now())
	AND ` + notDrainedS + `
	AND EXISTS (SELECT 1 FROM inbox i WHERE i.session_id = s.id AND i.claimed_seq IS NULL))`

// Orphaned reports whether id has pending messages, no live holder and
// no drain cut-off in force (a drained session's pending messages are
// settled by the drain, not run). It blocks for one read.
func (in durableInbox) Orphaned(ctx context.Context, id string) (bool, error) {
	var orphaned bool
	if err := in.s.pool.QueryRow(ctx, orphanSQL, id).Scan(&orphaned); err != nil {
		return false, fmt.Errorf(`pgstore: pending messages of session "%s": %w`, id, err)
	}
	return orphaned, nil
}

// wakeOrphans wakes (NOTIFY) every session with pending messages, no
// live holder and no drain cut-off in force, and returns their ids: the wakes that were lost (no
// listener heard them, or the holder went away before it ran them).
func (s *Store) wakeOrphans(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, orphansSQL)
	if err != nil {
		return nil, fmt.Errorf("pgstore: wake sessions with pending messages: %w", err)
	}
	ids, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (string, error) {
		var id, notified string
		err := row.Scan(&id, &notified)
		return id, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: wake sessions with pending messages: %w", err)
	}
	return ids, nil
}

var _ session.Waker = durableInbox{}

// The backoff between two connection attempts of a listener.
const (
	listenBackoffMin = 50 * time.Millisecond
	listenBackoffMax = 5 * time.Second
)

// Listen listens on the wake channel of the sessions with a parent on a
// connection of its own (see session.Waker.Listen). It logs each failed
// attempt at Warn (the error and the backoff before the next) and the
// reconnection after failures at Info, on the store's logger. Each time
// it starts listening, the first time too, it wakes the sessions whose
// wakes it may have missed before (wakeOrphans), as a sweep would: a wake
// sent while no listener listened is not lost until the next sweep. It
// calls listening once that catch-up ran, so a wake committed after
// listening is its commit's, not the catch-up's again.
func (in durableInbox) Listen(ctx context.Context, listening func(), wake func(id string)) error {
	return in.listen(ctx, wakeChannel, listening, wake)
}

// ListenTopLevel is Listen for the wakes of the top-level sessions: a
// user's prompt admitted to one (Admit from ""), its release with prompts
// pending, or a sweep finding it with prompts pending and no live holder.
// It blocks until ctx is done, as Listen.
func (in durableInbox) ListenTopLevel(ctx context.Context, listening func(), wake func(id string)) error {
	return in.listen(ctx, topLevelWakeChannel, listening, wake)
}

// listen is Listen on channel.
func (in durableInbox) listen(ctx context.Context, channel string, listening func(), wake func(id string)) error {
	backoff := listenBackoffMin
	failures := 0 // failed attempts since the last connection
	for {
		connected := func() {
			if failures > 0 {
				in.s.log.Info("pgstore: wake listener reconnected", "failedAttempts", failures)
			}
			backoff, failures = listenBackoffMin, 0
			_, _ = in.s.wakeOrphans(ctx)
			listening()
		}
		err := in.listenOnce(ctx, channel, connected, wake)
		if ctx.Err() == nil {
			failures++
			in.s.log.Warn("pgstore: wake listener connection failed", "err", err, "retryIn", backoff)
		}
		if err := waitOrDone(ctx, backoff); err != nil {
			return err
		}
		backoff = min(2*backoff, listenBackoffMax)
	}
}

// listenOnce connects, LISTENs on channel, calls connected and delivers
// wakes until the connection fails or ctx is done; the connection is
// closed.
func (in durableInbox) listenOnce(ctx context.Context, channel string, connected func(), wake func(id string)) error {
	conn, err := pgx.ConnectConfig(ctx, in.s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer closeQuietly(ctx, conn)
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		return err
	}
	connected()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		wake(n.Payload)
	}
}

// closeQuietly closes a listening connection, within a second even when
// ctx is done.
func closeQuietly(ctx context.Context, conn *pgx.Conn) {
	closing, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_ = conn.Close(closing)
}

// waitOrDone waits d, or returns ctx's error once it is done.
func waitOrDone(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

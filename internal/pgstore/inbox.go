package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/durable"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/jackc/pgx/v5"
)

// durableInbox is the Store's durable inbox: a session.DurableInbox, a
// session.DrainCutoffs and a session.Waker.
type durableInbox struct{ s *Store }

// DurableInbox returns the store's durable inbox: a Postgres store always
// admits durably. It does not block.
func (s *Store) DurableInbox() (session.DurableInbox, bool) { return durableInbox{s}, true }

// admitSQL accepts a message in one statement, the second of Admit's
// transaction (lockParentSQL holds the parent's row): the child row is
// locked (FOR NO KEY UPDATE) while its parent and drain are checked, so a
// drain cut-off committed first refuses the message and one committed
// after it waits for the row and then sees it. A user's prompt (empty $3)
// goes to a top-level session (no parent_id) and has no sender's lease to
// check; its row has no from_session. A disposed session (released
// with nothing pending) is made active again: a session with pending
// messages is never disposed. A row inserted wakes the session (NOTIFY on
// its wake channel, delivered at the commit); a duplicate wakes nothing.
const admitSQL = `WITH ins AS (INSERT INTO inbox (session_id, msg_id, from_session, from_epoch, body)
	SELECT $1, $2, nullif($3, ''), nullif($4::bigint, 0), $5
	WHERE EXISTS (SELECT 1 FROM sessions c WHERE c.id = $1 AND c.parent_id IS NOT DISTINCT FROM nullif($3, '')
			AND (c.drain_id IS NULL OR NOT EXISTS (SELECT 1 FROM sessions d
				WHERE d.id = c.drain_parent AND d.epoch = c.drain_epoch AND d.owner IS NOT NULL))
			FOR NO KEY UPDATE)
		AND ($3 = '' OR EXISTS (SELECT 1 FROM sessions p WHERE p.id = $3 AND p.epoch = $4
			AND p.owner IS NOT NULL AND p.lease_until > now()))
	ON CONFLICT (session_id, msg_id) DO NOTHING
	RETURNING inbox_seq, session_id),
	revived AS (UPDATE sessions SET state = 'active' WHERE id = $1 AND state = 'disposed' AND EXISTS (SELECT 1 FROM ins))
	SELECT ins.inbox_seq, pg_notify(CASE WHEN $3 = '' THEN '` + topLevelWakeChannel + `' ELSE '` + wakeChannel + `' END, ins.session_id)::text FROM ins`

// lockParentSQL locks the sender's row (FOR KEY SHARE, as Acquire and
// Create lock a parent) until Admit's transaction ends. A release or
// disposal of the parent locks that row FOR UPDATE before it reads the
// children, so it either commits before admitSQL takes its snapshot (a
// statement of its own, after this one: the parent is seen released and
// the message refused) or waits for the admission and then sees the child
// it made active (the parent is not disposed). Checked in the same
// statement as the insert, the parent would be read in a snapshot a
// release could overtake while the insert waits for the child's row,
// leaving the admitted child active below a disposed parent, which never
// resumes it.
const lockParentSQL = `SELECT 1 FROM sessions WHERE id = $1 FOR KEY SHARE`

// Admit commits m to id's inbox (see session.DurableInbox.Admit) in one
// transaction of two statements sent at once (one round trip): the lock
// of the sender's row, then the statement that checks the exact live
// parent, its epoch and the drain cut-off, inserts the row and wakes id.
// It blocks while a release of the parent holds its row, or a drain or
// the holder holds the child's. When it inserts nothing, one read tells
// why.
func (in durableInbox) Admit(ctx context.Context, id string, m session.Admission) (bool, error) {
	var seq int64
	var notified string
	batch := &pgx.Batch{}
	batch.Queue(lockParentSQL, m.From)
	admitted := false
	batch.Queue(admitSQL, id, m.MessageID, m.From, m.FromEpoch, []byte(m.Body)).QueryRow(func(row pgx.Row) error {
		err := row.Scan(&seq, &notified)
		admitted = err == nil
		return ignoreNoRows(err)
	})
	if err := in.s.pool.SendBatch(ctx, batch).Close(); err != nil {
		return false, fmt.Errorf(`pgstore: admit to session "%s": %w`, id, err)
	}
	if admitted {
		return true, nil
	}
	return false, in.whyNotAdmitted(ctx, id, m)
}

// whyNotAdmitted classifies an Admit that inserted nothing: already
// admitted (no error), not stored, another parent (or a user's prompt to
// a child), draining, or a parent epoch that is not the live lease.
func (in durableInbox) whyNotAdmitted(ctx context.Context, id string, m session.Admission) error {
	var admitted, parentLive, drained bool
	var parent *string
	err := in.s.pool.QueryRow(ctx, `SELECT c.parent_id,
			EXISTS (SELECT 1 FROM inbox i WHERE i.session_id = c.id AND i.msg_id = $2),
			EXISTS (SELECT 1 FROM sessions p WHERE p.id = $3 AND p.epoch = $4 AND p.owner IS NOT NULL AND p.lease_until > now()),
			c.drain_id IS NOT NULL AND EXISTS (SELECT 1 FROM sessions d WHERE d.id = c.drain_parent AND d.epoch = c.drain_epoch AND d.owner IS NOT NULL)
		FROM sessions c WHERE c.id = $1`, id, m.MessageID, m.From, m.FromEpoch).Scan(&parent, &admitted, &parentLive, &drained)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return notFound(id)
	case err != nil:
		return fmt.Errorf(`pgstore: admit to session "%s": %w`, id, err)
	case admitted:
		return nil
	case m.From == "" && parent != nil:
		return fault.New(fault.Unauthorized, fmt.Sprintf(`pgstore: session "%s" is a child of "%s": only a top-level session takes a user's prompt`, id, *parent), nil)
	case parent == nil && m.From != "" || parent != nil && *parent != m.From:
		return fault.New(fault.Unauthorized, fmt.Sprintf(`pgstore: session "%s" is not a child of "%s"`, id, m.From), nil)
	case drained:
		return fault.New(fault.Draining, fmt.Sprintf(`pgstore: admission to session "%s" is closed by a drain`, id), nil)
	case !parentLive && m.From != "":
		return fault.New(fault.Unauthorized, fmt.Sprintf(`pgstore: parent "%s" epoch %d is not the live lease`, m.From, m.FromEpoch),
			durable.Fenced(m.From, int64(m.FromEpoch)))
	}
	return fmt.Errorf(`pgstore: admit to session "%s": refused`, id)
}

// Pending returns id's unclaimed messages in admission order.
func (in durableInbox) Pending(ctx context.Context, id string) ([]session.Admission, error) {
	rows, err := in.s.pool.Query(ctx, `SELECT msg_id, from_session, from_epoch, body FROM inbox
		WHERE session_id = $1 AND claimed_seq IS NULL ORDER BY inbox_seq`, id)
	if err != nil {
		return nil, fmt.Errorf(`pgstore: pending of session "%s": %w`, id, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (session.Admission, error) {
		var a session.Admission
		var from *string
		var epoch *int64
		var body []byte
		err := row.Scan(&a.MessageID, &from, &epoch, &body)
		if from != nil {
			a.From = *from
		}
		if epoch != nil {
			a.FromEpoch = session.Epoch(*epoch)
		}
		a.Body = json.RawMessage(body)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf(`pgstore: pending of session "%s": %w`, id, err)
	}
	return out, nil
}

// Discard settles messages of id without a turn (claimed_seq -1), only
// while epoch is id's latest lease (held, or released with no takeover
// since: a teardown discards before and after it gives the lease up).
func (in durableInbox) Discard(ctx context.Context, id string, epoch session.Epoch, messageIDs []string) error {
	if len(messageIDs) == 0 {
		return nil
	}
	tag, err := in.s.pool.Exec(ctx, `UPDATE inbox SET claimed_epoch = $2, claimed_seq = -1
		WHERE session_id = $1 AND msg_id = ANY($3::text[]) AND claimed_seq IS NULL
		AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = $1 AND s.epoch = $2)`,
		id, epoch, messageIDs)
	if err != nil {
		return fmt.Errorf(`pgstore: discard in session "%s": %w`, id, err)
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	var current int64
	err = in.s.pool.QueryRow(ctx, `SELECT epoch FROM sessions WHERE id = $1`, id).Scan(&current)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return notFound(id)
	case err != nil:
		return fmt.Errorf(`pgstore: discard in session "%s": %w`, id, err)
	case session.Epoch(current) != epoch:
		return durable.Fenced(id, int64(epoch))
	}
	return nil // settled already
}

// closeAdmissionSQL opens a drain below $1 at epoch $2 and marks every
// session below it, in one statement: disposed ones too, as an admission
// makes a disposed session active again. It wakes each marked session
// that a process holds, at the commit, so its holder disposes it. The
// rows are locked in id order first, as a renewal locks them (renewSQL),
// so a drain and a renewal over the same sessions cannot deadlock.
const closeAdmissionSQL = `WITH RECURSIVE below(id) AS (
		SELECT id FROM sessions WHERE parent_id = $1
		UNION SELECT s.id FROM sessions s JOIN below b ON s.parent_id = b.id),
	locked AS (SELECT id FROM sessions WHERE id IN (SELECT id FROM below) ORDER BY id FOR NO KEY UPDATE),
	d AS (INSERT INTO drains (drain_id, parent_id, parent_epoch) VALUES (gen_random_uuid(), $1, $2) RETURNING drain_id),
	r AS (UPDATE sessions SET drain_id = d.drain_id, drain_parent = $1, drain_epoch = $2
		FROM d WHERE sessions.id IN (SELECT id FROM locked) RETURNING sessions.id, sessions.owner)
	SELECT pg_notify('` + wakeChannel + `', r.id) FROM r WHERE r.owner IS NOT NULL`

// drainedSQL: is admission to $1 closed by a drain in force?
const drainedSQL = `SELECT EXISTS (SELECT 1 FROM sessions c WHERE c.id = $1 AND c.drain_id IS NOT NULL
	AND EXISTS (SELECT 1 FROM sessions d WHERE d.id = c.drain_parent AND d.epoch = c.drain_epoch AND d.owner IS NOT NULL))`

// Drained reports whether a drain in force closes admission to id.
func (in durableInbox) Drained(ctx context.Context, id string) (bool, error) {
	var drained bool
	if err := in.s.pool.QueryRow(ctx, drainedSQL, id).Scan(&drained); err != nil {
		return false, fmt.Errorf(`pgstore: drain of session "%s": %w`, id, err)
	}
	return drained, nil
}

// heldBelowSQL: does a session below $1 hold a live lease?
const heldBelowSQL = `WITH RECURSIVE below(id) AS (
		SELECT id FROM sessions WHERE parent_id = $1
		UNION SELECT s.id FROM sessions s JOIN below b ON s.parent_id = b.id)
	SELECT EXISTS (SELECT 1 FROM sessions s JOIN below b ON b.id = s.id
		WHERE s.owner IS NOT NULL AND s.lease_until > now())`

// The interval between two reads of AwaitReleasedBelow when no release
// was heard, doubling up to the longest: a lease that expires (its holder
// died) is seen by reading, as is any release while it cannot listen.
const (
	releasedPollMin = 5 * time.Millisecond
	releasedPollMax = time.Second
)

// AwaitReleasedBelow listens on the released channel (on a connection of
// its own) and reads, after each release heard and at growing intervals,
// until no session below parent holds a live lease, or ctx is done. It
// listens before its first read, so a release that commits after that
// read is heard; if it cannot listen, it only reads.
func (in durableInbox) AwaitReleasedBelow(ctx context.Context, parent string) error {
	listenCtx, stop := context.WithCancel(ctx)
	released, listened := in.s.listenReleased(listenCtx)
	defer func() { stop(); <-listened }()
	for interval := releasedPollMin; ; interval = min(2*interval, releasedPollMax) {
		var held bool
		if err := in.s.pool.QueryRow(ctx, heldBelowSQL, parent).Scan(&held); err != nil {
			return fmt.Errorf(`pgstore: leases below "%s": %w`, parent, err)
		}
		if !held {
			return nil
		}
		t := time.NewTimer(interval)
		select {
		case <-released:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		t.Stop()
	}
}

// listenReleased LISTENs on the released channel until ctx is done; it
// returns once listening (or failed to), with a channel that gets a value
// after each release heard (coalesced) and one closed when it has stopped.
func (s *Store) listenReleased(ctx context.Context) (<-chan struct{}, <-chan struct{}) {
	released, stopped, ready := make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		var once sync.Once
		defer once.Do(func() { close(ready) })
		conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
		if err != nil {
			return
		}
		defer closeQuietly(ctx, conn)
		if _, err := conn.Exec(ctx, "LISTEN "+releasedChannel); err != nil {
			return
		}
		once.Do(func() { close(ready) })
		for {
			if _, err := conn.WaitForNotification(ctx); err != nil {
				return
			}
			select {
			case released <- struct{}{}:
			default:
			}
		}
	}()
	<-ready
	return released, stopped
}

// CloseAdmission records a drain cut-off below parent at epoch, waking
// the sessions below it that a process holds.
func (in durableInbox) CloseAdmission(ctx context.Context, parent string, epoch session.Epoch) error {
	if _, err := in.s.pool.Exec(ctx, closeAdmissionSQL, parent, epoch); err != nil {
		return fmt.Errorf(`pgstore: close admission below "%s": %w`, parent, err)
	}
	return nil
}

// claims is the message ids and seqs of a batch's user/message events:
// the messages its append claims.
func claims(events []session.Event) (ids []string, seqs []int64) {
	for _, e := range events {
		if e.Type != vocab.TypeUserMessage {
			continue
		}
		if id := durable.MessageID(e.Data); id != "" {
			ids, seqs = append(ids, id), append(seqs, e.Seq)
		}
	}
	return ids, seqs
}

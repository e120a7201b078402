package pgstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/dsh-actors/dsh-actors/internal/durable"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/jackc/pgx/v5"
)

// acquireSQL takes a lease: the session becomes active again (a disposed
// one is resumed) unless its parent is disposed. The parent's row is
// locked (FOR KEY SHARE) while that is checked, so a release of the
// parent, which locks it FOR UPDATE before it reads the children, either
// commits first (and the child is refused) or sees this child active.
const acquireSQL = `WITH parent AS (SELECT p.state FROM sessions c JOIN sessions p ON p.id = c.parent_id
		WHERE c.id = $1 FOR KEY SHARE OF p)
	UPDATE sessions SET epoch = epoch + 1, owner = $2, lease_until = now() + $3::interval, state = 'active'
	WHERE id = $1 AND (owner IS NULL OR lease_until < now())
		AND NOT EXISTS (SELECT 1 FROM parent WHERE state = 'disposed')
	RETURNING epoch`

// Acquire takes id's lease: one statement bumps the epoch and names this
// store the owner, only while no other owner's lease is live (the
// database's clock decides) and id's parent, if stored, is not disposed.
// A live lease, this store's own included, is fault.LeaseHeld; a disposed
// parent is session.ErrNotFound (only a live parent resumes its
// children).
func (s *Store) Acquire(ctx context.Context, id string) (session.Epoch, error) {
	var epoch session.Epoch
	err := s.pool.QueryRow(ctx, acquireSQL, id, s.owner, interval(s.ttl)).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, s.whyNotAcquired(ctx, id)
	}
	if err != nil {
		return 0, fmt.Errorf(`pgstore: acquire session "%s": %w`, id, err)
	}
	s.mu.Lock()
	s.held[id] = epoch
	s.mu.Unlock()
	return epoch, nil
}

func interval(d time.Duration) string { return fmt.Sprintf("%d microseconds", d.Microseconds()) }

// whyNotAcquired classifies a refused Acquire with one read.
func (s *Store) whyNotAcquired(ctx context.Context, id string) error {
	var owner, parent *string
	var parentDisposed bool
	err := s.pool.QueryRow(ctx, `SELECT c.owner, c.parent_id, coalesce(p.state = 'disposed', false)
		FROM sessions c LEFT JOIN sessions p ON p.id = c.parent_id WHERE c.id = $1`, id).Scan(&owner, &parent, &parentDisposed)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return notFound(id)
	case err != nil:
		return fmt.Errorf(`pgstore: acquire session "%s": %w`, id, err)
	case parentDisposed:
		return fmt.Errorf(`pgstore: session "%s": its parent "%s" is disposed: %w`, id, *parent, session.ErrNotFound)
	case owner != nil && *owner == s.owner:
		return durable.LeaseHeld(id, "this store")
	case owner != nil:
		return durable.LeaseHeld(id, fmt.Sprintf("owner %q", *owner))
	}
	return durable.LeaseHeld(id, "another owner")
}

// AppendFenced appends under epoch in one statement that checks, in the
// row it locks, that epoch and this owner still hold the lease (and
// extends it): a stale epoch is fault.Fenced and no row is written.
func (s *Store) AppendFenced(ctx context.Context, id string, epoch session.Epoch, events []session.Event) error {
	if epoch == 0 {
		return durable.Fenced(id, int64(epoch))
	}
	return s.appendUnder(ctx, id, epoch, events)
}

// appendUnder writes events (their lines as the JSONL store writes them)
// under epoch, or unfenced when epoch is 0.
func (s *Store) appendUnder(ctx context.Context, id string, epoch session.Epoch, events []session.Event) error {
	if len(events) == 0 {
		return nil
	}
	first := events[0].Seq
	lines, err := session.EventLines(id, first, events)
	if err != nil {
		return err
	}
	return s.insertLines(ctx, id, epoch, newBatch(events, lines))
}

// The fenced and unfenced appends: the session row's update (the seq
// check, and for the fenced one the lease check) feeds the insert, so
// nothing is inserted when it matches no row. $1 id, $2 first seq, $3
// count, $4–$7 the event columns; the fenced head adds $8 TTL, $9 epoch,
// $10 owner.
const (
	fencedHead = `WITH s AS (
		UPDATE sessions SET next_seq = next_seq + $3, lease_until = now() + $8::interval
		WHERE id = $1 AND next_seq = $2 AND epoch = $9 AND owner = $10
		RETURNING epoch)`
	plainHead = `WITH s AS (
		UPDATE sessions SET next_seq = next_seq + $3
		WHERE id = $1 AND next_seq = $2
		RETURNING epoch)`
	insertEvents = `INSERT INTO events (session_id, seq, epoch, type, time, line)
	SELECT $1, e.seq, s.epoch, e.type, e.time, e.line FROM s, unnest($4::bigint[], $5::text[], $6::bigint[], $7::text[]) AS e(seq, type, time, line)`
)

var (
	appendFencedSQL = fencedHead + "\n" + insertEvents
	appendSQL       = plainHead + "\n" + insertEvents
	// The claiming appends also claim, in the same statement, the inbox
	// rows of the batch's user/message events ($n message ids, $n+1 their
	// seqs), under the epoch the row update returned.
	appendFencedClaimSQL = claiming(fencedHead, 11)
	appendClaimSQL       = claiming(plainHead, 8)
)

func claiming(head string, n int) string {
	return fmt.Sprintf(`%s, ins AS (%s RETURNING 1),
	claim AS (UPDATE inbox i SET claimed_epoch = s.epoch, claimed_seq = m.seq
		FROM s, unnest($%d::text[], $%d::bigint[]) AS m(id, seq)
		WHERE i.session_id = $1 AND i.msg_id = m.id AND i.claimed_seq IS NULL)
	SELECT count(*) FROM ins`, head, insertEvents, n, n+1)
}

func (s *Store) insertLines(ctx context.Context, id string, epoch session.Epoch, b batch) error {
	first, n := b.seqs[0], len(b.seqs)
	args := []any{id, first, n, b.seqs, b.types, b.times, b.lines}
	sql := appendSQL
	if epoch != 0 {
		args, sql = append(args, interval(s.ttl), epoch, s.owner), appendFencedSQL
	}
	inserted, err := s.exec(ctx, sql, args, b)
	if err != nil {
		return fmt.Errorf(`pgstore: append to session "%s": %w`, id, err)
	}
	if inserted == int64(n) {
		return nil
	}
	return s.whyNotAppended(ctx, id, epoch, first)
}

// exec runs an append and returns the number of events it inserted; a
// batch that claims inbox messages runs the claiming form of sql.
func (s *Store) exec(ctx context.Context, sql string, args []any, b batch) (int64, error) {
	if len(b.claimIDs) == 0 {
		tag, err := s.pool.Exec(ctx, sql, args...)
		return tag.RowsAffected(), err
	}
	claimSQL := appendClaimSQL
	if sql == appendFencedSQL {
		claimSQL = appendFencedClaimSQL
	}
	var inserted int64
	err := s.pool.QueryRow(ctx, claimSQL, append(args, b.claimIDs, b.claimSeqs)...).Scan(&inserted)
	return inserted, err
}

// whyNotAppended classifies an append that wrote nothing with one read:
// not stored, fenced, or not continuing the log.
func (s *Store) whyNotAppended(ctx context.Context, id string, epoch session.Epoch, first int64) error {
	var current session.Epoch
	var owner *string
	var next int64
	err := s.pool.QueryRow(ctx, `SELECT epoch, owner, next_seq FROM sessions WHERE id = $1`, id).Scan(&current, &owner, &next)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return notFound(id)
	case err != nil:
		return fmt.Errorf(`pgstore: append to session "%s": %w`, id, err)
	case epoch != 0 && (current != epoch || owner == nil || *owner != s.owner):
		return durable.Fenced(id, int64(epoch))
	}
	return fmt.Errorf(`pgstore: append seq mismatch for "%s": expected %d, got %d: %w`, id, next, first, session.ErrSeqMismatch)
}

// Release gives up the lease of epoch (a no-op when it is not current),
// disposes the session child-first and, when id has pending messages
// (admitted while its holder was leaving), wakes it so another holder
// runs them. It is marked disposed only when none of its children is
// undisposed, whatever store released them, and no message of its inbox
// is pending; otherwise it stays active, with no owner. Disposed, it
// cascades upward: each released ancestor left active only for it is
// disposed in turn. Every acknowledged append is committed already, so
// there is nothing to wait for. It blocks for one transaction (one round
// trip), which waits for a child's Acquire or Create that is checking
// this session's state, and then for one more per ancestor it disposes.
func (s *Store) Release(ctx context.Context, id string, epoch session.Epoch) error {
	s.mu.Lock()
	if s.held[id] == epoch {
		delete(s.held, id)
	}
	s.mu.Unlock()
	// One round trip: a batch runs as one implicit transaction, and each
	// of its statements reads with a snapshot of its own.
	batch := &pgx.Batch{}
	batch.Queue(`SELECT 1 FROM sessions WHERE id = $1 AND epoch = $2 AND owner = $3 FOR UPDATE`, id, epoch, s.owner)
	batch.Queue(disposeSQL, id, epoch, s.owner)
	var parent string
	batch.Queue(disposedParentSQL, id, epoch).QueryRow(func(row pgx.Row) error {
		return ignoreNoRows(row.Scan(&parent))
	})
	if err := s.pool.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf(`pgstore: release session "%s": %w`, id, err)
	}
	return s.cascadeDisposal(ctx, parent)
}

// disposedParentSQL is the parent of a session this release disposed
// (none when it is top-level or stays active).
const disposedParentSQL = `SELECT parent_id FROM sessions
	WHERE id = $1 AND epoch = $2 AND owner IS NULL AND state = 'disposed' AND parent_id IS NOT NULL`

// cascadeDisposal disposes id, a parent whose child was just disposed,
// when it was released (no owner) with nothing pending and no other child
// undisposed, and then its own parent likewise, up to the first ancestor
// that stays. Each step is one transaction that locks only that row (FOR
// UPDATE, as a release does) before it reads the children, so a child's
// concurrent Acquire or Create either commits first and is seen, or waits
// and finds the parent disposed; and of two siblings disposed at once the
// later step sees both.
func (s *Store) cascadeDisposal(ctx context.Context, id string) error {
	for id != "" {
		batch := &pgx.Batch{}
		batch.Queue(`SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE`, id)
		next := ""
		batch.Queue(cascadeSQL, id).QueryRow(func(row pgx.Row) error {
			return ignoreNoRows(row.Scan(&next))
		})
		if err := s.pool.SendBatch(ctx, batch).Close(); err != nil {
			return fmt.Errorf(`pgstore: dispose session "%s" after its last child: %w`, id, err)
		}
		id = next
	}
	return nil
}

// cascadeSQL disposes a released session whose children are all disposed
// and whose inbox has nothing pending, returning its parent (empty at the
// top); no row when it stays.
const cascadeSQL = `UPDATE sessions AS s SET state = 'disposed'
	WHERE s.id = $1 AND s.state = 'active' AND s.owner IS NULL
		AND NOT EXISTS (SELECT 1 FROM sessions k WHERE k.parent_id = s.id AND k.state <> 'disposed')
		AND NOT EXISTS (SELECT 1 FROM inbox i WHERE i.session_id = s.id AND i.claimed_seq IS NULL)
	RETURNING coalesce(s.parent_id, '')`

// ignoreNoRows is err, except that no row is no error.
func ignoreNoRows(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	return err
}

// disposeSQL ends the lease of epoch of a session whose row the
// transaction has locked (a no-op when epoch is not current), marks it
// disposed unless a child of it is not disposed or a message of its inbox
// is pending, and wakes it when one is (and tells a waiting drain when a
// drain marked it). It is a statement of its own,
// after the lock, so it sees every child that a concurrent Acquire or
// Create made active and committed.
const disposeSQL = `WITH r AS (UPDATE sessions AS s SET owner = NULL, lease_until = NULL,
		state = CASE WHEN EXISTS (SELECT 1 FROM sessions k WHERE k.parent_id = s.id AND k.state <> 'disposed')
				OR EXISTS (SELECT 1 FROM inbox i WHERE i.session_id = s.id AND i.claimed_seq IS NULL)
			THEN s.state ELSE 'disposed' END
	WHERE s.id = $1 AND s.epoch = $2 AND s.owner = $3 RETURNING s.id, s.parent_id, s.drain_id) ` + notifyPending + notifyReleased

// WatchLeases registers lost with the watchers Renew tells, and returns
// what removes it (a no-op once Close removed them all).
func (s *Store) WatchLeases(lost func(id string, epoch session.Epoch)) (stop func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watchers == nil {
		s.watchers = map[uint64]func(string, session.Epoch){}
	}
	s.watchSeq++
	key := s.watchSeq
	s.watchers[key] = lost
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.watchers, key)
	}
}

// renewSQL extends the leases ($1 ids, $2 epochs) that $3 still holds
// by $4. The rows are locked in id order first, as a drain's cut-off
// locks the sessions it marks, so a renewal and a drain over the same
// sessions cannot deadlock.
const renewSQL = `WITH locked AS (SELECT s.id FROM sessions AS s
		JOIN unnest($1::text[], $2::bigint[]) AS h(id, epoch) ON s.id = h.id AND s.epoch = h.epoch
		WHERE s.owner = $3 ORDER BY s.id FOR NO KEY UPDATE OF s)
	UPDATE sessions AS s SET lease_until = now() + $4::interval
	FROM locked WHERE s.id = locked.id AND s.owner = $3
	RETURNING s.id`

// Renew extends every lease this store holds in one statement and returns
// the ids whose lease it no longer holds (another owner took over after
// it expired); those are forgotten, and each is told, with the epoch that
// lost it, to the watchers (WatchLeases) before Renew returns.
func (s *Store) Renew(ctx context.Context) ([]string, error) {
	s.mu.Lock()
	ids := make([]string, 0, len(s.held))
	epochs := make([]int64, 0, len(s.held))
	for id, e := range s.held {
		ids, epochs = append(ids, id), append(epochs, int64(e))
	}
	s.mu.Unlock()
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, renewSQL, ids, epochs, s.owner, interval(s.ttl))
	if err != nil {
		return nil, fmt.Errorf("pgstore: renew leases: %w", err)
	}
	renewed, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("pgstore: renew leases: %w", err)
	}
	lost, watchers := s.forgetLost(ids, epochs, renewed)
	for _, l := range lost {
		for _, watch := range watchers {
			watch(l.id, session.Epoch(l.epoch))
		}
	}
	ids = make([]string, len(lost))
	for i, l := range lost {
		ids[i] = l.id
	}
	return ids, nil
}

// lostLease is a lease Renew found lost: its session and epoch.
type lostLease struct {
	id    string
	epoch int64
}

// forgetLost drops from held every lease asked for but not renewed and
// returns them with the watchers to tell. A lease released meanwhile
// (gone from held) was given up, not lost, and one re-acquired meanwhile
// (another epoch held) is not the one asked for: neither is returned.
func (s *Store) forgetLost(ids []string, epochs []int64, renewed []string) ([]lostLease, []func(string, session.Epoch)) {
	kept := make(map[string]bool, len(renewed))
	for _, id := range renewed {
		kept[id] = true
	}
	var lost []lostLease
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, id := range ids {
		if kept[id] || s.held[id] != session.Epoch(epochs[i]) {
			continue
		}
		delete(s.held, id)
		lost = append(lost, lostLease{id, epochs[i]})
	}
	if len(lost) == 0 {
		return nil, nil
	}
	return lost, slices.Collect(maps.Values(s.watchers))
}

// Load is the repairing read: it reads the log, refuses one the original
// cannot build a session from as the JSONL store's Load does (a relative
// cwd, events that break the surface rules: session.ErrCorrupt, nothing
// written) and, when its final turn is open (its writer died mid-turn),
// appends the closers Load of the JSONL store appends, under this store's
// lease when it holds one, else only while no other owner's lease is live
// (fault.LeaseHeld otherwise).
func (s *Store) Load(ctx context.Context, id string) (*session.Log, error) {
	log, err := s.Inspect(ctx, id)
	if err != nil {
		return nil, err
	}
	closers, lines, err := session.LoadRepair(log, logName(id))
	if err != nil {
		return nil, err
	}
	if len(closers) == 0 {
		return log, nil
	}
	if err := s.appendClosers(ctx, id, newBatch(closers, lines)); err != nil {
		return nil, err
	}
	log.Events = append(log.Events, closers...)
	return log, nil
}

func (s *Store) appendClosers(ctx context.Context, id string, b batch) error {
	s.mu.Lock()
	epoch, held := s.held[id]
	s.mu.Unlock()
	if held {
		return s.insertLines(ctx, id, epoch, b)
	}
	tag, err := s.pool.Exec(ctx, `WITH s AS (
		UPDATE sessions SET next_seq = next_seq + $3
		WHERE id = $1 AND next_seq = $2 AND (owner IS NULL OR lease_until < now())
		RETURNING epoch)
	INSERT INTO events (session_id, seq, epoch, type, time, line)
	SELECT $1, e.seq, s.epoch, e.type, e.time, e.line FROM s, unnest($4::bigint[], $5::text[], $6::bigint[], $7::text[]) AS e(seq, type, time, line)`,
		id, b.seqs[0], len(b.seqs), b.seqs, b.types, b.times, b.lines)
	if err != nil {
		return fmt.Errorf(`pgstore: repair session "%s": %w`, id, err)
	}
	if tag.RowsAffected() == int64(len(b.seqs)) {
		return nil
	}
	if err := s.whyNotAcquired(ctx, id); errors.Is(err, session.ErrNotFound) {
		return err
	}
	return durable.LeaseHeld(id, "another owner; it is not repaired here")
}

// LeaseCurrent reports whether epoch is id's current lease: id's row has
// that epoch, an owner and a lease_until past now() on the database's
// clock; the host asks it before it accepts a prompt. An unknown id holds
// no lease. It blocks for one round trip.
func (s *Store) LeaseCurrent(ctx context.Context, id string, epoch int64) (bool, error) {
	var current bool
	err := s.pool.QueryRow(ctx, `SELECT epoch = $2 AND owner IS NOT NULL AND lease_until > now() FROM sessions WHERE id = $1`,
		id, epoch).Scan(&current)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf(`pgstore: lease of session "%s": %w`, id, err)
	}
	return current, nil
}

// LiveEpoch returns the epoch of id's lease when a process holds it live
// (an owner and a lease_until past now() on the database's clock), false
// otherwise or for an unknown id: what a process that does not run id
// admits a follow-up from it under. It blocks for one round trip.
func (s *Store) LiveEpoch(ctx context.Context, id string) (int64, bool, error) {
	var epoch int64
	err := s.pool.QueryRow(ctx, `SELECT epoch FROM sessions WHERE id = $1 AND owner IS NOT NULL AND lease_until > now()`, id).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf(`pgstore: lease of session "%s": %w`, id, err)
	}
	return epoch, true, nil
}

// HeldElsewhere reports whether an owner other than this store holds id's
// lease live now (a lease_until past now() on the database's clock). It
// only reads: the lease is neither taken nor renewed, and one a holder
// let expire is left to the next Acquire or sweep. An unknown id is held
// by no one. It blocks for one round trip.
func (s *Store) HeldElsewhere(ctx context.Context, id string) (bool, error) {
	var held bool
	err := s.pool.QueryRow(ctx, `SELECT owner IS NOT NULL AND owner <> $2 AND lease_until > now() FROM sessions WHERE id = $1`,
		id, s.owner).Scan(&held)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf(`pgstore: lease of session "%s": %w`, id, err)
	}
	return held, nil
}

package multiproc

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
)

// historySQL records every change of a session's epoch (an Acquire) with
// the lease it replaced, so that Check can tell whether two owners ever
// held one session at once. now() is the acquiring statement's own
// clock, the one its lease check compared with.
const historySQL = `
CREATE TABLE IF NOT EXISTS lease_history (
	session_id       text COLLATE "C" NOT NULL,
	epoch            bigint NOT NULL,
	owner            text,
	acquired_at      timestamptz NOT NULL,
	prev_epoch       bigint NOT NULL,
	prev_owner       text,
	prev_lease_until timestamptz,
	PRIMARY KEY (session_id, epoch)
);
CREATE OR REPLACE FUNCTION record_lease() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO lease_history VALUES (NEW.id, NEW.epoch, NEW.owner, now(), OLD.epoch, OLD.owner, OLD.lease_until);
	RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS record_lease ON sessions;
CREATE TRIGGER record_lease AFTER UPDATE OF epoch ON sessions
	FOR EACH ROW WHEN (NEW.epoch <> OLD.epoch) EXECUTE FUNCTION record_lease();
`

// InstallHistory adds the lease history to the store at dsn, whose
// tables must exist (a node started on it creates them); install it
// before any session is acquired.
func InstallHistory(ctx context.Context, dsn string) error {
	return withConn(ctx, dsn, func(conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, historySQL)
		return err
	})
}

func withConn(ctx context.Context, dsn string, fn func(*pgx.Conn) error) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("multiproc: connect: %w", err)
	}
	defer conn.Close(context.Background())
	return fn(conn)
}

// Report is what Check found: the counts it checked and every invariant
// broken, one line each (none: the store is sound).
type Report struct {
	Sessions, Events, Acquisitions, Acked int
	// DisposedParents counts the disposed sessions that have children:
	// the ones the child-first check had something to check in.
	DisposedParents int
	Violations      []string
}

func (r *Report) violate(format string, args ...any) {
	r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
}

// storedEvent is one row of the events table.
type storedEvent struct {
	seq, epoch int64
	typ, line  string
}

// storedSession is one row of the sessions table and its events.
type storedSession struct {
	id, parent, state string
	epoch, nextSeq    int64
	events            []storedEvent
}

// Check reads the store at dsn and reports, for every session: seq
// contiguous from 0 up to next_seq; epochs never decreasing along seq
// and never above the session's current one; every epoch acquired only
// when the lease before it had been released or had expired (the lease
// history: one owner at a time), and every epoch an event carries
// acquired (or 0, the creation's); every user message logged once; every
// durable inbox row claimed by the user message carrying its id under the
// claiming epoch, or pending; no disposed session with a child that is
// not; and every acknowledged follow-up in acked logged in its child or
// pending in its inbox.
func Check(ctx context.Context, dsn string, acked []Acked) (Report, error) {
	var r Report
	err := withConn(ctx, dsn, func(conn *pgx.Conn) error {
		sessions, err := readSessions(ctx, conn)
		if err != nil {
			return err
		}
		acquired, err := checkHistory(ctx, conn, &r)
		if err != nil {
			return err
		}
		logged := checkLogs(sessions, acquired, &r)
		pending, err := checkInbox(ctx, conn, sessions, &r)
		if err != nil {
			return err
		}
		checkDisposal(sessions, &r)
		checkAcked(acked, logged, pending, &r)
		return nil
	})
	return r, err
}

func readSessions(ctx context.Context, conn *pgx.Conn) (map[string]*storedSession, error) {
	rows, err := conn.Query(ctx, `SELECT id, coalesce(parent_id, ''), state, epoch, next_seq FROM sessions`)
	if err != nil {
		return nil, fmt.Errorf("multiproc: read sessions: %w", err)
	}
	sessions := map[string]*storedSession{}
	for rows.Next() {
		s := &storedSession{}
		if err := rows.Scan(&s.id, &s.parent, &s.state, &s.epoch, &s.nextSeq); err != nil {
			return nil, err
		}
		sessions[s.id] = s
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = conn.Query(ctx, `SELECT session_id, seq, epoch, type, line FROM events ORDER BY session_id, seq`)
	if err != nil {
		return nil, fmt.Errorf("multiproc: read events: %w", err)
	}
	for rows.Next() {
		var id string
		var e storedEvent
		if err := rows.Scan(&id, &e.seq, &e.epoch, &e.typ, &e.line); err != nil {
			return nil, err
		}
		if s := sessions[id]; s != nil {
			s.events = append(s.events, e)
		}
	}
	return sessions, rows.Err()
}

// checkHistory checks that each acquisition found the previous lease
// released or expired, and returns the epochs acquired per session.
func checkHistory(ctx context.Context, conn *pgx.Conn, r *Report) (map[string]map[int64]bool, error) {
	rows, err := conn.Query(ctx, `SELECT session_id, epoch, coalesce(owner, ''), acquired_at, prev_epoch, coalesce(prev_owner, ''), prev_lease_until
		FROM lease_history ORDER BY session_id, epoch`)
	if err != nil {
		return nil, fmt.Errorf("multiproc: read lease history: %w", err)
	}
	defer rows.Close()
	acquired := map[string]map[int64]bool{}
	for rows.Next() {
		var id, owner, prevOwner string
		var epoch, prevEpoch int64
		var at time.Time
		var prevUntil *time.Time
		if err := rows.Scan(&id, &epoch, &owner, &at, &prevEpoch, &prevOwner, &prevUntil); err != nil {
			return nil, err
		}
		r.Acquisitions++
		if acquired[id] == nil {
			acquired[id] = map[int64]bool{}
		}
		acquired[id][epoch] = true
		if epoch <= prevEpoch {
			r.violate("session %s: epoch went from %d to %d", id, prevEpoch, epoch)
		}
		if prevOwner != "" && (prevUntil == nil || !prevUntil.Before(at)) {
			r.violate("session %s: %s acquired epoch %d at %s while %s's lease of epoch %d was live (until %v): two owners at once",
				id, owner, epoch, at.Format(time.RFC3339Nano), prevOwner, prevEpoch, prevUntil)
		}
	}
	return acquired, rows.Err()
}

// checkLogs checks each session's events and returns, per session, the
// ids of the user messages it logged.
func checkLogs(sessions map[string]*storedSession, acquired map[string]map[int64]bool, r *Report) map[string]map[string]int64 {
	logged := map[string]map[string]int64{}
	for _, s := range sessions {
		r.Sessions++
		r.Events += len(s.events)
		logged[s.id] = map[string]int64{}
		if int64(len(s.events)) != s.nextSeq {
			r.violate("session %s: %d events stored, next_seq is %d", s.id, len(s.events), s.nextSeq)
		}
		var last int64
		for i, e := range s.events {
			if e.seq != int64(i) {
				r.violate("session %s: event %d has seq %d (not contiguous)", s.id, i, e.seq)
			}
			if e.epoch < last {
				r.violate("session %s: seq %d written under epoch %d after epoch %d (a stale writer)", s.id, e.seq, e.epoch, last)
			}
			if e.epoch > s.epoch || (e.epoch != 0 && !acquired[s.id][e.epoch]) {
				r.violate("session %s: seq %d carries epoch %d, never acquired", s.id, e.seq, e.epoch)
			}
			last = max(last, e.epoch)
			if e.typ != "user/message" {
				continue
			}
			id := messageID(e.line)
			if first, dup := logged[s.id][id]; dup && id != "" {
				r.violate("session %s: message %s logged twice (seq %d and %d)", s.id, id, first, e.seq)
			}
			logged[s.id][id] = e.seq
		}
	}
	return logged
}

// messageID is the id of the message in a user/message line.
func messageID(line string) string {
	var e struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	_ = json.Unmarshal([]byte(line), &e)
	return e.Data.ID
}

// checkInbox checks every durable inbox row: claimed by the user message
// with its id, at the claimed seq, under the claimed epoch; or pending
// (returned per session); or discarded (claimed_seq -1, by a drain).
func checkInbox(ctx context.Context, conn *pgx.Conn, sessions map[string]*storedSession, r *Report) (map[string]map[string]bool, error) {
	rows, err := conn.Query(ctx, `SELECT session_id, msg_id::text, claimed_epoch, claimed_seq FROM inbox`)
	if err != nil {
		return nil, fmt.Errorf("multiproc: read inbox: %w", err)
	}
	defer rows.Close()
	pending := map[string]map[string]bool{}
	for rows.Next() {
		var id, msg string
		var epoch, seq *int64
		if err := rows.Scan(&id, &msg, &epoch, &seq); err != nil {
			return nil, err
		}
		switch {
		case seq == nil:
			if pending[id] == nil {
				pending[id] = map[string]bool{}
			}
			pending[id][msg] = true
		case *seq >= 0:
			checkClaim(sessions[id], id, msg, epoch, *seq, r)
		}
	}
	return pending, rows.Err()
}

func checkClaim(s *storedSession, id, msg string, epoch *int64, seq int64, r *Report) {
	if s == nil || seq >= int64(len(s.events)) {
		r.violate("session %s: inbox message %s claimed at seq %d, which is not stored", id, msg, seq)
		return
	}
	e := s.events[seq]
	if e.typ != "user/message" || messageID(e.line) != msg {
		r.violate("session %s: inbox message %s claimed at seq %d, a %s of message %q", id, msg, seq, e.typ, messageID(e.line))
	}
	if epoch == nil || *epoch != e.epoch {
		r.violate("session %s: inbox message %s claimed under epoch %v, its event written under %d", id, msg, epoch, e.epoch)
	}
}

// checkDisposal: a disposed session has no child that is not disposed.
func checkDisposal(sessions map[string]*storedSession, r *Report) {
	parents := map[string]bool{}
	for _, s := range sessions {
		p := sessions[s.parent]
		if p == nil || p.state != "disposed" {
			continue
		}
		parents[p.id] = true
		if s.state != "disposed" {
			r.violate("session %s is disposed before its child %s (%s)", p.id, s.id, s.state)
		}
	}
	r.DisposedParents = len(parents)
}

// checkAcked: every acknowledged follow-up is logged in its child or
// pending in its durable inbox.
func checkAcked(acked []Acked, logged map[string]map[string]int64, pending map[string]map[string]bool, r *Report) {
	r.Acked = len(acked)
	var lost []string
	for _, a := range acked {
		if _, ok := logged[a.Child][a.MessageID]; ok || pending[a.Child][a.MessageID] {
			continue
		}
		lost = append(lost, fmt.Sprintf("%s→%s (acknowledged by %s)", a.MessageID, a.Child, a.Node))
	}
	sort.Strings(lost)
	for i, l := range lost {
		if i == 10 {
			r.violate("… %d more acknowledged follow-ups lost", len(lost)-10)
			break
		}
		r.violate("acknowledged follow-up lost: %s", l)
	}
}

// Logged returns the seq of the user message msgID in session id's log,
// false while it is not logged.
func Logged(ctx context.Context, dsn, id, msgID string) (int64, bool, error) {
	var seq int64
	err := withConn(ctx, dsn, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, `SELECT seq FROM events WHERE session_id = $1 AND type = 'user/message'
			AND (line::jsonb -> 'data' ->> 'id') = $2`, id, msgID).Scan(&seq)
	})
	if err == pgx.ErrNoRows {
		return 0, false, nil
	}
	return seq, err == nil, err
}

// AwaitLogged blocks until every follow-up in acked is logged in its
// child (polling the store), or ctx ends: then the error names how many
// are not and the first of them.
func AwaitLogged(ctx context.Context, dsn string, acked []Acked) error {
	for {
		missing, err := unlogged(ctx, dsn, acked)
		if err != nil || len(missing) == 0 {
			return err
		}
		if err := pause(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("multiproc: %d acknowledged follow-ups not logged (first: %s→%s via %s): %w",
				len(missing), missing[0].MessageID, missing[0].Child, missing[0].Node, err)
		}
	}
}

func unlogged(ctx context.Context, dsn string, acked []Acked) ([]Acked, error) {
	ids := map[string]bool{}
	err := withConn(ctx, dsn, func(conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, `SELECT session_id || ' ' || coalesce(line::jsonb -> 'data' ->> 'id', '') FROM events WHERE type = 'user/message'`)
		if err != nil {
			return err
		}
		keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
		for _, k := range keys {
			ids[k] = true
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("multiproc: read logged messages: %w", err)
	}
	var missing []Acked
	for _, a := range acked {
		if !ids[a.Child+" "+a.MessageID] {
			missing = append(missing, a)
		}
	}
	return missing, nil
}

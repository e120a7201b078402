package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/dsh-actors/dsh-actors/session"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// defaultTTL is how long a lease lasts without renewal.
const defaultTTL = 10 * time.Second

// Store is the session.Fenced store over one PostgreSQL database. All
// methods are safe for concurrent use.
type Store struct {
	pool  *pgxpool.Pool
	owner string
	ttl   time.Duration
	log   *slog.Logger

	mu       sync.Mutex
	held     map[string]session.Epoch                        // the leases this store holds
	watchers map[uint64]func(id string, epoch session.Epoch) // told of each lease Renew finds lost, until removed or Close
	watchSeq uint64                                          // the key of the latest watcher

	stop    chan struct{}
	renewer sync.WaitGroup
	closed  sync.Once
}

var _ session.Fenced = (*Store)(nil)

// Option configures Open.
type Option func(*Store)

// WithTTL sets the lease TTL (10 s by default, and when d <= 0). The store renews
// its leases every third of it.
func WithTTL(d time.Duration) Option {
	return func(s *Store) {
		if d > 0 {
			s.ttl = d
		}
	}
}

// WithLogger sets the logger of the store's own connections (the wake
// listener's failures and recoveries); by default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(s *Store) {
		if l != nil {
			s.log = l
		}
	}
}

// WithOwner names this store's leases (default: host:pid:random), as
// other processes see them in sessions.owner.
func WithOwner(name string) Option { return func(s *Store) { s.owner = name } }

// Open connects to the database named by dsn (a postgres:// URL or a
// key=value string), creates the tables when they are missing and
// starts the goroutine that renews this store's leases. It blocks until
// the schema is in place.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	s := &Store{ttl: defaultTTL, log: slog.New(slog.DiscardHandler), held: map[string]session.Epoch{}, stop: make(chan struct{})}
	for _, opt := range opts {
		opt(s)
	}
	if s.owner == "" {
		s.owner = defaultOwner()
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("pgstore: open: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	s.pool = pool
	s.renewer.Add(1)
	go s.renewLoop()
	return s, nil
}

func defaultOwner() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// releaseAllSQL gives up every lease $1 holds, waking those with pending
// messages. The rows are locked in id order first, as a drain's cut-off
// locks the sessions it marks, so a Close and a drain over the same
// sessions cannot deadlock.
const releaseAllSQL = `WITH locked AS (SELECT id FROM sessions WHERE owner = $1 ORDER BY id FOR NO KEY UPDATE),
	r AS (UPDATE sessions SET owner = NULL, lease_until = NULL
		WHERE id IN (SELECT id FROM locked) AND owner = $1 RETURNING id, parent_id, drain_id) ` + notifyPending + notifyReleased

// Close stops renewing (and forgets every lease watcher: no lease is
// found lost after it), gives up every lease this store holds (waking
// those with pending messages, for another process to run) and closes
// the connections. It blocks until a renewal under way ends and the
// release is committed (at most 10 s). It is idempotent.
func (s *Store) Close() error {
	var err error
	s.closed.Do(func() {
		close(s.stop)
		s.renewer.Wait()
		s.mu.Lock()
		s.watchers = nil // no lease is renewed, none is found lost
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = s.pool.Exec(ctx, releaseAllSQL, s.owner)
		s.pool.Close()
	})
	return err
}

// renewLoop renews the held leases every third of the TTL until Close.
func (s *Store) renewLoop() {
	defer s.renewer.Done()
	tick := time.NewTicker(s.ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(context.Background(), s.ttl/3)
			_, _ = s.Renew(ctx)
			cancel()
		}
	}
}

func notFound(id string) error {
	return fmt.Errorf(`pgstore: session "%s": %w`, id, session.ErrNotFound)
}

// List returns the header of every session, oldest first.
func (s *Store) List(ctx context.Context) ([]session.Header, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, header_line FROM sessions ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list: %w", err)
	}
	defer rows.Close()
	var out []session.Header
	for rows.Next() {
		var id, line string
		if err := rows.Scan(&id, &line); err != nil {
			return nil, err
		}
		var h session.Header
		if h.UnmarshalJSON([]byte(line)) != nil {
			continue // as the JSONL List skips a folder without a valid header
		}
		if err := checkNamed(id, h); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// checkNamed refuses the header h of row id when it names another
// session, in the words of the JSONL store (and of session.ReadLog) for a
// log whose header names another session than the one read.
func checkNamed(id string, h session.Header) error {
	if h.ID == id {
		return nil
	}
	return &corruptRow{msg: fmt.Sprintf(`corrupt session log "postgres:sessions/%s": requested id "%s" does not match header id "%s"`, id, id, h.ID)}
}

// corruptRow is a stored row the store refuses: it matches
// session.ErrCorrupt, as a damaged JSONL log does.
type corruptRow struct{ msg string }

func (e *corruptRow) Error() string        { return e.msg }
func (e *corruptRow) Is(target error) bool { return target == session.ErrCorrupt }

// Inspect returns the stored log of id; it never writes.
func (s *Store) Inspect(ctx context.Context, id string) (*session.Log, error) {
	header, lines, err := s.readLines(ctx, id)
	if err != nil {
		return nil, err
	}
	return parseLog(id, header, lines)
}

// readLines reads the header line and the event lines of id in seq order,
// in one snapshot.
func (s *Store) readLines(ctx context.Context, id string) (header string, lines []string, err error) {
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT header_line FROM sessions WHERE id = $1`, id).Scan(&header); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return notFound(id)
			}
			return err
		}
		rows, err := tx.Query(ctx, `SELECT line FROM events WHERE session_id = $1 ORDER BY seq`, id)
		if err != nil {
			return err
		}
		lines, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil && !errors.Is(err, session.ErrNotFound) {
		err = fmt.Errorf(`pgstore: read session "%s": %w`, id, err)
	}
	return header, lines, err
}

// parseLog reads id's stored lines with the JSONL store's read checks
// (session.ReadLog).
func parseLog(id, header string, lines []string) (*session.Log, error) {
	return session.ReadLog(id, logName(id), header, lines)
}

// logName is how errors name the log of id.
func logName(id string) string { return "postgres:sessions/" + id }

// Create inserts the session and its seed in one transaction; an id that
// is stored already is session.ErrExists.
func (s *Store) Create(ctx context.Context, h session.Header, seed []session.Event) error {
	headerLine, err := session.HeaderLine(h)
	if err != nil {
		return err
	}
	lines, err := session.EventLines(h.ID, 0, seed)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := refuseDisposedParent(ctx, tx, h); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO sessions (id, header_line, parent_id, created_at, origin, delegation_depth, next_seq)
			VALUES ($1, $2, NULLIF($3, ''), $4, NULLIF($5, ''), $6, $7) ON CONFLICT (id) DO NOTHING`,
			h.ID, string(headerLine), h.ParentSession, h.CreatedAt, h.Origin, h.DelegationDepth, len(seed))
		if err != nil {
			return fmt.Errorf(`pgstore: create session "%s": %w`, h.ID, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf(`pgstore: session "%s" already exists: %w`, h.ID, session.ErrExists)
		}
		if len(seed) == 0 {
			return nil
		}
		b := newBatch(seed, lines)
		_, err = tx.Exec(ctx, `INSERT INTO events (session_id, seq, epoch, type, time, line)
			SELECT $1, e.seq, 0, e.type, e.time, e.line FROM unnest($2::bigint[], $3::text[], $4::bigint[], $5::text[]) AS e(seq, type, time, line)`,
			h.ID, b.seqs, b.types, b.times, b.lines)
		return err
	})
}

// refuseDisposedParent refuses a child of a parent that is disposed. It
// locks the parent's row (FOR KEY SHARE) until the creating transaction
// ends, so a release of the parent that has not committed yet waits and
// then sees the new child (the parent stays active).
func refuseDisposedParent(ctx context.Context, tx pgx.Tx, h session.Header) error {
	if h.ParentSession == "" {
		return nil
	}
	var state string
	err := tx.QueryRow(ctx, `SELECT state FROM sessions WHERE id = $1 FOR KEY SHARE`, h.ParentSession).Scan(&state)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil // a parent this store does not hold
	case err != nil:
		return fmt.Errorf(`pgstore: create session "%s": %w`, h.ID, err)
	case state == "disposed":
		return fmt.Errorf(`pgstore: create session "%s": its parent "%s" is disposed: %w`, h.ID, h.ParentSession, session.ErrNotFound)
	}
	return nil
}

// batch is events as the columns of one multi-row insert.
type batch struct {
	seqs  []int64
	types []string
	times []int64
	lines []string
	// the inbox messages the batch claims (its user/message events)
	claimIDs  []string
	claimSeqs []int64
}

func newBatch(events []session.Event, lines [][]byte) batch {
	b := batch{seqs: make([]int64, len(events)), types: make([]string, len(events)), times: make([]int64, len(events)), lines: make([]string, len(events))}
	for i, e := range events {
		b.seqs[i], b.types[i], b.times[i], b.lines[i] = e.Seq, e.Type, e.Time, string(lines[i])
	}
	b.claimIDs, b.claimSeqs = claims(events)
	return b
}

// Append adds events at the end of id's log whoever holds its lease (the
// unfenced write; the registry writes through AppendFenced). It returns
// once the batch is committed.
func (s *Store) Append(ctx context.Context, id string, events []session.Event) error {
	return s.appendUnder(ctx, id, 0, events)
}

// Flush reports true once id exists: every acknowledged Append is
// committed already.
func (s *Store) Flush(ctx context.Context, id string) (bool, error) {
	var one int
	err := s.pool.QueryRow(ctx, `SELECT 1 FROM sessions WHERE id = $1`, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, notFound(id)
	}
	if err != nil {
		return false, fmt.Errorf(`pgstore: flush session "%s": %w`, id, err)
	}
	return true, nil
}

// The capabilities the runtime asserts on a Postgres store.
var (
	_ session.Admitting    = (*Store)(nil)
	_ session.LeaseWatcher = (*Store)(nil)
	_ session.Sweeper      = (*Store)(nil)
)

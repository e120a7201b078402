package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

var ctx = context.Background()

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(ctx) })
	return conn
}

// expire ends id's lease in the database as a holder paused past its TTL
// would see it.
func expire(t *testing.T, conn *pgx.Conn, id string) {
	t.Helper()
	_, err := conn.Exec(ctx, `UPDATE sessions SET lease_until = now() - interval '1 second' WHERE id = $1`, id)
	require.NoError(t, err)
}

// A paused holder whose lease expired is taken over; its next append is
// fenced without a row written, and its renewal reports the lease lost.
func TestAnExpiredLeaseIsTakenOverAndTheOldHolderFenced(t *testing.T) {
	dsn := cluster.Database(t)
	paused, other := openStore(t, dsn, WithOwner("paused")), openStore(t, dsn, WithOwner("other"))
	conn := connect(t, dsn)
	require.NoError(t, paused.Create(ctx, storetest.Header("s", ""), nil))
	old, err := paused.Acquire(ctx, "s")
	require.NoError(t, err)
	require.NoError(t, paused.AppendFenced(ctx, "s", old, []session.Event{storetest.Note(0, "before")}))

	_, err = other.Acquire(ctx, "s")
	require.ErrorIs(t, err, fault.LeaseHeld)
	require.Contains(t, err.Error(), `owner "paused"`)
	expire(t, conn, "s")
	taken, err := other.Acquire(ctx, "s")
	require.NoError(t, err)
	require.Equal(t, old+1, taken)

	err = paused.AppendFenced(ctx, "s", old, []session.Event{storetest.Note(1, "stale")})
	require.ErrorIs(t, err, fault.Fenced)
	lost, err := paused.Renew(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"s"}, lost)
	require.NoError(t, other.AppendFenced(ctx, "s", taken, []session.Event{storetest.Note(1, "after")}))

	var rows, stale int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE line LIKE '%stale%') FROM events WHERE session_id = 's'`).Scan(&rows, &stale))
	require.Equal(t, 2, rows)
	require.Zero(t, stale, "no stale row reached the store")
	var epochs []int64
	r, err := conn.Query(ctx, `SELECT epoch FROM events WHERE session_id = 's' ORDER BY seq`)
	require.NoError(t, err)
	epochs, err = pgx.CollectRows(r, pgx.RowTo[int64])
	require.NoError(t, err)
	require.Equal(t, []int64{int64(old), int64(taken)}, epochs, "each event carries the epoch it was written under")
}

// A lease a renewal finds lost is reported to the store's watchers with
// the epoch that lost it, once; a lease released meanwhile is not.
func TestRenewTellsTheWatchersOfEachLostLease(t *testing.T) {
	dsn := cluster.Database(t)
	paused, other := openStore(t, dsn, WithOwner("paused"), WithTTL(time.Hour)), openStore(t, dsn, WithOwner("other"))
	conn := connect(t, dsn)
	type loss struct {
		id    string
		epoch session.Epoch
	}
	var losses []loss
	var watcher session.LeaseWatcher = paused
	watcher.WatchLeases(func(id string, epoch session.Epoch) { losses = append(losses, loss{id, epoch}) })
	epochs := map[string]session.Epoch{}
	for _, id := range []string{"kept", "lost", "released"} {
		require.NoError(t, paused.Create(ctx, storetest.Header(id, ""), nil))
		e, err := paused.Acquire(ctx, id)
		require.NoError(t, err)
		epochs[id] = e
	}
	expire(t, conn, "lost")
	_, err := other.Acquire(ctx, "lost")
	require.NoError(t, err)
	require.NoError(t, paused.Release(ctx, "released", epochs["released"]))

	lost, err := paused.Renew(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"lost"}, lost)
	require.Equal(t, []loss{{"lost", epochs["lost"]}}, losses)
	lost, err = paused.Renew(ctx)
	require.NoError(t, err)
	require.Empty(t, lost)
	require.Len(t, losses, 1, "a lost lease is forgotten: it is reported once")
}

// Renew extends every held lease in one statement; Close gives them up.
func TestRenewExtendsEveryHeldLease(t *testing.T) {
	dsn := cluster.Database(t)
	s := openStore(t, dsn, WithTTL(time.Hour))
	conn := connect(t, dsn)
	ids := []string{"a", "b", "c"}
	for _, id := range ids {
		require.NoError(t, s.Create(ctx, storetest.Header(id, ""), nil))
		_, err := s.Acquire(ctx, id)
		require.NoError(t, err)
		_, err = conn.Exec(ctx, `UPDATE sessions SET lease_until = now() + interval '1 minute' WHERE id = $1`, id)
		require.NoError(t, err)
	}
	lost, err := s.Renew(ctx)
	require.NoError(t, err)
	require.Empty(t, lost)
	var extended int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM sessions WHERE lease_until > now() + interval '50 minutes' AND owner = $1`, s.owner).Scan(&extended))
	require.Equal(t, 3, extended)

	require.NoError(t, s.Close())
	var owned int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM sessions WHERE owner IS NOT NULL`).Scan(&owned))
	require.Zero(t, owned, "Close gives every lease up")
}

// Events are stored as the JSONL store's lines, verbatim; the header too.
func TestRowsHoldTheJSONLLinesVerbatim(t *testing.T) {
	dsn := cluster.Database(t)
	s := openStore(t, dsn)
	h := storetest.Header("v", "p")
	events := []session.Event{storetest.Note(0, "a\u2028b <&>"), storetest.Note(1, "two")}
	events[1].SurfaceOp = []byte(`"append"`)
	events[1].SourceEventSeqs = []int64{0}
	require.NoError(t, s.Create(ctx, h, events[:1]))
	require.NoError(t, s.Append(ctx, "v", events[1:]))
	conn := connect(t, dsn)
	var header string
	require.NoError(t, conn.QueryRow(ctx, `SELECT header_line FROM sessions WHERE id = 'v'`).Scan(&header))
	want, err := session.HeaderLine(h)
	require.NoError(t, err)
	require.Equal(t, string(want), header)
	r, err := conn.Query(ctx, `SELECT line FROM events WHERE session_id = 'v' ORDER BY seq`)
	require.NoError(t, err)
	lines, err := pgx.CollectRows(r, pgx.RowTo[string])
	require.NoError(t, err)
	wantLines, err := session.EventLines("v", 0, events)
	require.NoError(t, err)
	require.Equal(t, []string{string(wantLines[0]), string(wantLines[1])}, lines)
}

// A row that does not parse matches session.ErrCorrupt and names the
// session and the line, as a damaged JSONL log does.
func TestADamagedRowIsCorrupt(t *testing.T) {
	dsn := cluster.Database(t)
	s := openStore(t, dsn)
	require.NoError(t, s.Create(ctx, storetest.Header("d", ""), []session.Event{storetest.Note(0, "ok")}))
	_, err := connect(t, dsn).Exec(ctx, `UPDATE events SET line = '{"type":' WHERE session_id = 'd'`)
	require.NoError(t, err)
	_, err = s.Inspect(ctx, "d")
	require.ErrorIs(t, err, session.ErrCorrupt)
	require.EqualError(t, err, "corrupt session log: unparsable committed event at line 1 (raw log: postgres:sessions/d)")
}

// LeaseCurrent is true only for the epoch that holds a live lease: not
// for one that expired (even before anyone took it over), nor an older
// epoch, nor once released, nor for an unknown session.
func TestLeaseCurrentIsTheLiveEpochOnly(t *testing.T) {
	dsn := cluster.Database(t)
	paused, other := openStore(t, dsn, WithOwner("paused")), openStore(t, dsn, WithOwner("other"))
	conn := connect(t, dsn)
	require.NoError(t, paused.Create(ctx, storetest.Header("s", ""), nil))
	old, err := paused.Acquire(ctx, "s")
	require.NoError(t, err)
	current := func(s *Store, epoch session.Epoch) bool {
		t.Helper()
		ok, err := s.LeaseCurrent(ctx, "s", int64(epoch))
		require.NoError(t, err)
		return ok
	}
	require.True(t, current(paused, old))
	require.True(t, current(other, old), "any process reads it alike")
	expire(t, conn, "s")
	require.False(t, current(paused, old), "expired, not yet taken over")
	taken, err := other.Acquire(ctx, "s")
	require.NoError(t, err)
	require.False(t, current(paused, old), "taken over")
	require.True(t, current(other, taken))
	require.NoError(t, other.Release(ctx, "s", taken))
	require.False(t, current(other, taken), "released")
	unknown, err := other.LeaseCurrent(ctx, "missing", 1)
	require.NoError(t, err)
	require.False(t, unknown)
}

// HeldElsewhere is true only while another owner holds a live lease: not
// for this store's own, one no one holds, one that expired (which it
// leaves to be taken over) or an unknown session. It only reads: the
// lease it saw stays its holder's, with the same epoch and expiry.
// (The holder renews every third of its TTL: an hour keeps it still.)
func TestHeldElsewhereOnlyReadsTheLease(t *testing.T) {
	dsn := cluster.Database(t)
	holder, prober := openStore(t, dsn, WithOwner("holder"), WithTTL(time.Hour)), openStore(t, dsn, WithOwner("prober"))
	conn := connect(t, dsn)
	require.NoError(t, holder.Create(ctx, storetest.Header("s", ""), nil))
	held := func(s *Store, id string) bool {
		t.Helper()
		ok, err := s.HeldElsewhere(ctx, id)
		require.NoError(t, err)
		return ok
	}
	require.False(t, held(prober, "missing"), "an unknown session")
	require.False(t, held(prober, "s"), "no one holds it")
	epoch, err := holder.Acquire(ctx, "s")
	require.NoError(t, err)
	lease := func() string {
		t.Helper()
		var row string
		require.NoError(t, conn.QueryRow(ctx, `SELECT concat_ws(' ', epoch, owner, lease_until) FROM sessions WHERE id = 's'`).Scan(&row))
		return row
	}
	before := lease()
	require.True(t, held(prober, "s"), "another owner's live lease")
	require.False(t, held(holder, "s"), "its own lease is not elsewhere")
	require.Equal(t, before, lease(), "the probe changed nothing")
	expire(t, conn, "s")
	require.False(t, held(prober, "s"), "expired")
	current, err := holder.LeaseCurrent(ctx, "s", int64(epoch))
	require.NoError(t, err)
	require.False(t, current, "nothing renewed it")
	taken, err := prober.Acquire(ctx, "s")
	require.NoError(t, err, "left to be taken over")
	require.True(t, held(holder, "s"))
	require.NoError(t, prober.Release(ctx, "s", taken))
}

// A stored event of a type this build does not know, not marked
// ignorable, makes every read refuse the log with the JSONL store's
// message (it is not damage: not session.ErrCorrupt); marked ignorable it
// is read and kept.
func TestAnUnknownEventTypeIsRefusedUnlessIgnorable(t *testing.T) {
	dsn := cluster.Database(t)
	s := openStore(t, dsn)
	require.NoError(t, s.Create(ctx, storetest.Header("u", ""), []session.Event{storetest.Note(0, "ok")}))
	conn := connect(t, dsn)
	_, err := conn.Exec(ctx, `UPDATE events SET line = '{"type":"future/thing","seq":0,"time":1,"data":{"x":1}}' WHERE session_id = 'u'`)
	require.NoError(t, err)
	want := `session "u" contains event type "future/thing" (seq 0) unknown to this harness and not marked ignorable; ` +
		"refusing to interpret the log — it was likely written by a newer harness (raw log: postgres:sessions/u)"
	for _, read := range []func(context.Context, string) (*session.Log, error){s.Inspect, s.Load} {
		_, err = read(ctx, "u")
		require.EqualError(t, err, want)
		require.NotErrorIs(t, err, session.ErrCorrupt)
	}

	_, err = conn.Exec(ctx, `UPDATE events SET line = '{"type":"future/thing","seq":0,"time":1,"data":{"x":1},"ignorable":true}' WHERE session_id = 'u'`)
	require.NoError(t, err)
	log, err := s.Inspect(ctx, "u")
	require.NoError(t, err)
	require.Len(t, log.Events, 1)
	require.Equal(t, "future/thing", log.Events[0].Type, "an ignorable unknown event is kept")
	require.True(t, log.Events[0].Ignorable)
}

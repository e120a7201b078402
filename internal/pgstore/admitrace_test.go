package pgstore

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// disposedChild creates parent p (its lease taken) and child c, which is
// acquired and released with nothing pending (disposed), and returns p's
// epoch.
func disposedChild(t *testing.T, s *Store, conn *pgx.Conn, p, c string) session.Epoch {
	t.Helper()
	require.NoError(t, s.Create(ctx, storetest.Header(p, ""), nil))
	require.NoError(t, s.Create(ctx, storetest.Header(c, p), nil))
	pe, err := s.Acquire(ctx, p)
	require.NoError(t, err)
	ce, err := s.Acquire(ctx, c)
	require.NoError(t, err)
	require.NoError(t, s.Release(ctx, c, ce))
	require.Equal(t, "disposed", state(t, conn, c))
	return pe
}

// requireReachable checks the outcome of an admission of msg to c that
// raced the release of c's parent p: refused, and then nothing is
// pending in c; or admitted, and then p stays undisposed (a disposed p
// with an active c below it is the orphan: c's Acquire is refused) and
// p's next resume (another store) reaches c and the message.
func requireReachable(t *testing.T, other *Store, conn *pgx.Conn, p, c, msg string, fresh bool, err error) {
	t.Helper()
	in := durableInbox{other}
	if !fresh {
		require.Error(t, err, "refused, not a duplicate")
		pending, err := in.Pending(ctx, c)
		require.NoError(t, err)
		require.Empty(t, pending, "a refused admission left no row")
		return
	}
	require.NoError(t, err)
	require.Equal(t, "active", state(t, conn, p), "the parent stays until its admitted child is disposed")
	require.Equal(t, "active", state(t, conn, c))
	pe, err := other.Acquire(ctx, p)
	require.NoError(t, err)
	ce, err := other.Acquire(ctx, c)
	require.NoError(t, err, "the parent's next resume reaches the child")
	pending, err := in.Pending(ctx, c)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	require.Equal(t, msg, pending[0].MessageID)
	require.NoError(t, in.Discard(ctx, c, ce, []string{msg}))
	require.NoError(t, other.Release(ctx, c, ce))
	require.NoError(t, other.Release(ctx, p, pe))
}

// awaitLockWaiters returns once n backends of the database wait for a
// row lock, or when done is closed.
func awaitLockWaiters(t *testing.T, conn *pgx.Conn, n int, done <-chan struct{}) {
	t.Helper()
	for {
		var waiting int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting))
		if waiting >= n {
			return
		}
		select {
		case <-done:
			return
		default:
			runtime.Gosched()
		}
	}
}

// An admission whose statement began while its parent was live, and that
// the parent's release overtakes (the admission waits for the child's
// row, here held by another transaction), is refused or keeps the parent
// from being disposed: its row stays reachable by the parent's next
// resume, never below a disposed parent.
func TestAnAdmissionOvertakenByTheParentsReleaseIsNotOrphaned(t *testing.T) {
	dsn := cluster.Database(t)
	s, other := openStore(t, dsn, WithOwner("node")), openStore(t, dsn, WithOwner("other"))
	conn, watch := connect(t, dsn), connect(t, dsn)
	pe := disposedChild(t, s, conn, "p", "c")

	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `SELECT 1 FROM sessions WHERE id = 'c' FOR NO KEY UPDATE`)
	require.NoError(t, err)
	type result struct {
		fresh bool
		err   error
	}
	admitted, released := make(chan result, 1), make(chan struct{})
	go func() {
		fresh, err := durableInbox{s}.Admit(ctx, "c", storetest.Message("m", "p", pe))
		admitted <- result{fresh, err}
	}()
	awaitLockWaiters(t, watch, 1, nil)
	var releaseErr error
	go func() { defer close(released); releaseErr = s.Release(context.Background(), "p", pe) }()
	awaitLockWaiters(t, watch, 2, released) // the release waits for the admission, or is done
	require.NoError(t, tx.Commit(ctx))
	r := testkit.Receive(t, admitted, "the admission")
	testkit.Receive(t, released, "the release")
	require.NoError(t, releaseErr)
	requireReachable(t, other, conn, "p", "c", "m", r.fresh, r.err)
}

// Admissions racing the release of their parent, 200 rounds: each is
// refused, or admitted with its row reachable by the parent's next
// resume.
func TestAdmissionsRacingTheParentsReleaseAreNeverOrphaned(t *testing.T) {
	dsn := cluster.Database(t)
	s, other := openStore(t, dsn, WithOwner("node")), openStore(t, dsn, WithOwner("other"))
	conn := connect(t, dsn)
	for round := range 200 {
		p, c := fmt.Sprintf("p%d", round), fmt.Sprintf("c%d", round)
		pe := disposedChild(t, s, conn, p, c)
		var wg sync.WaitGroup
		var fresh bool
		var admitErr, releaseErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			fresh, admitErr = durableInbox{s}.Admit(ctx, c, storetest.Message("m", p, pe))
		}()
		go func() { defer wg.Done(); releaseErr = s.Release(ctx, p, pe) }()
		testkit.Wait(t, &wg, "the admission and the release")
		require.NoError(t, releaseErr)
		requireReachable(t, other, conn, p, c, "m", fresh, admitErr)
	}
}

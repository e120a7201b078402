package pgstore

import (
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// state is id's sessions.state.
func state(t *testing.T, conn *pgx.Conn, id string) string {
	t.Helper()
	var s string
	require.NoError(t, conn.QueryRow(ctx, `SELECT state FROM sessions WHERE id = $1`, id).Scan(&s))
	return s
}

// A release marks the session disposed only when no child of it is
// undisposed, whichever store (node) releases which: a parent released
// before its child stays active; released again once the child is
// disposed, it is disposed. Disposal is not final: Acquire makes a
// disposed session active again, except a child whose parent is disposed
// (only a live parent resumes its children).
func TestReleaseDisposesChildFirstWhateverNodeReleases(t *testing.T) {
	dsn := cluster.Database(t)
	nodeA, nodeB := openStore(t, dsn, WithOwner("a")), openStore(t, dsn, WithOwner("b"))
	conn := connect(t, dsn)
	require.NoError(t, nodeA.Create(ctx, storetest.Header("p", ""), nil))
	require.NoError(t, nodeA.Create(ctx, storetest.Header("c", "p"), nil))
	parentEpoch, err := nodeA.Acquire(ctx, "p")
	require.NoError(t, err)
	childEpoch, err := nodeB.Acquire(ctx, "c")
	require.NoError(t, err)

	require.NoError(t, nodeA.Release(ctx, "p", parentEpoch))
	require.Equal(t, "active", state(t, conn, "p"), "a parent is not disposed before its child")
	require.NoError(t, nodeB.Release(ctx, "c", childEpoch))
	require.Equal(t, "disposed", state(t, conn, "c"))
	require.Equal(t, "active", state(t, conn, "p"))

	parentEpoch, err = nodeB.Acquire(ctx, "p")
	require.NoError(t, err)
	require.NoError(t, nodeB.Release(ctx, "p", parentEpoch))
	require.Equal(t, "disposed", state(t, conn, "p"), "released after its child, the parent is disposed")

	_, err = nodeA.Acquire(ctx, "c")
	require.ErrorIs(t, err, session.ErrNotFound, "a child of a disposed parent is not resumed")
	require.Contains(t, err.Error(), `parent "p" is disposed`)
	require.Equal(t, "disposed", state(t, conn, "c"))

	parentEpoch, err = nodeA.Acquire(ctx, "p")
	require.NoError(t, err)
	require.Equal(t, "active", state(t, conn, "p"), "a disposed session is resumed")
	childEpoch, err = nodeA.Acquire(ctx, "c")
	require.NoError(t, err, "under its live parent the child is resumed")
	require.Equal(t, "active", state(t, conn, "c"))
	require.NoError(t, nodeA.Release(ctx, "c", childEpoch))
	require.NoError(t, nodeA.Release(ctx, "p", parentEpoch))
	require.Equal(t, []string{"disposed", "disposed"}, []string{state(t, conn, "c"), state(t, conn, "p")})
}

// A child created under a parent that is disposed meanwhile is refused,
// so no undisposed child ever sits below a disposed parent.
func TestCreateUnderADisposedParentIsRefused(t *testing.T) {
	dsn := cluster.Database(t)
	s := openStore(t, dsn)
	require.NoError(t, s.Create(ctx, storetest.Header("p", ""), nil))
	epoch, err := s.Acquire(ctx, "p")
	require.NoError(t, err)
	require.NoError(t, s.Release(ctx, "p", epoch))
	err = s.Create(ctx, storetest.Header("late", "p"), nil)
	require.ErrorIs(t, err, session.ErrNotFound)
	require.Contains(t, err.Error(), `parent "p" is disposed`)
	_, err = s.Inspect(ctx, "late")
	require.ErrorIs(t, err, session.ErrNotFound, "nothing of the refused child is stored")
}
